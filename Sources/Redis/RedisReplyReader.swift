import CHiredis

/// hiredis's RESP parser over bytes this module reads itself: the only owner of its `redisReader`.
final class RedisReplyReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() throws {
        guard let reader = redisReaderCreate() else { throw RedisError(.io, "could not allocate a reply reader") }
        self.reader = reader
    }

    deinit { redisReaderFree(reader) }

    /// Appends received bytes.
    func feed(_ bytes: UnsafeRawBufferPointer) throws {
        let status = redisReaderFeed(reader, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        try check(status, what: "feed")
    }

    /// The next complete reply, or `nil` when more bytes are needed.
    func next() throws -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        try check(redisReaderGetReply(reader, &raw), what: "parse reply")
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return Self.reply(from: raw.assumingMemoryBound(to: redisReply.self))
    }

    /// The single check of the reader's status codes.
    private func check(_ status: Int32, what: String) throws {
        guard status == REDIS_OK else {
            let message = withUnsafePointer(to: &reader.pointee.errstr) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: reader.pointee.errstr)) { String(cString: $0) }
            }
            throw RedisError(.protocol, message.isEmpty ? "invalid reply" : message, context: what)
        }
    }

    /// Formats one command as RESP with hiredis (binary-safe: explicit lengths).
    static func format(_ arguments: [RedisArgument], into output: inout [UInt8]) {
        var storage: [UInt8] = []
        storage.reserveCapacity(arguments.reduce(1) { $0 + $1.bytes.count })
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count)
        for argument in arguments {
            storage.append(contentsOf: argument.bytes)
            lengths.append(argument.bytes.count)
        }
        storage.append(0)
        storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(lengths.count)
            var offset = 0
            for length in lengths {
                pointers.append(base + offset)
                offset += length
            }
            var target: UnsafeMutablePointer<CChar>?
            let length = pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { redisFormatCommandArgv(&target, Int32(arguments.count), argv.baseAddress!, $0.baseAddress!) }
            }
            guard let target, length > 0 else { preconditionFailure("redisFormatCommandArgv failed (out of memory)") }
            defer { redisFreeCommand(target) }
            output.append(contentsOf: UnsafeRawBufferPointer(start: target, count: Int(length)))
        }
    }

    static func reply(from raw: UnsafePointer<redisReply>) -> RedisReply {
        let reply = raw.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            return .bulk(reply.len == 0 ? [] : Array(UnsafeRawBufferPointer(start: reply.str, count: reply.len)))
        case REDIS_REPLY_STATUS: return .status(text(reply))
        case REDIS_REPLY_ERROR: return .error(text(reply))
        case REDIS_REPLY_INTEGER: return .integer(reply.integer)
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(reply.elements)
            for index in 0..<reply.elements {
                if let element = reply.element[index] { elements.append(Self.reply(from: element)) } else { elements.append(.null) }
            }
            return .array(elements)
        default: return .null
        }
    }

    private static func text(_ reply: redisReply) -> String {
        guard reply.len > 0, let str = reply.str else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: str, count: reply.len), as: UTF8.self)
    }
}
