import CHiredis
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One connection to Redis: the only owner of its hiredis `redisContext`.
///
/// Thread-confined: use it from one thread at a time (the pool's slot thread or a dedicated `SerialThread`).
/// Every call blocks. A connection whose socket broke reconnects (AUTH, SELECT again) at its next use.
public final class RedisConnection {
    public let configuration: RedisConfiguration
    private var context: UnsafeMutablePointer<redisContext>?
    private var closedByOwner = false

    /// Opens the connection, authenticates and selects the database; throws a typed error quickly when it can't.
    public init(configuration: RedisConfiguration) throws {
        self.configuration = configuration
        try open()
    }

    deinit { if let context { redisFree(context) } }

    /// Whether the socket is open and no error has been seen on it.
    public var isHealthy: Bool {
        guard let context, !closedByOwner else { return false }
        return context.pointee.err == 0
    }

    /// Frees the socket; later calls throw `.closed`.
    public func close() {
        closedByOwner = true
        dropContext()
    }

    /// Sends one command and returns its reply; a server error reply is returned as `.error`, not thrown.
    public func send(_ arguments: [RedisArgument]) throws -> RedisReply {
        let context = try usableContext()
        let raw = withArgv(arguments) { count, argv, lengths in redisCommandArgv(context, count, argv, lengths) }
        let failure = errno
        guard let raw else { throw failureError(what: Self.name(of: arguments), errnoValue: failure) }
        defer { freeReplyObject(raw) }
        return Self.reply(from: raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Sends one command; a server error reply is thrown as `RedisError` (`.server`, `.noScript`, …).
    @discardableResult
    public func command(_ arguments: [RedisArgument]) throws -> RedisReply {
        try send(arguments).throwIfError(context: Self.name(of: arguments))
    }

    /// Sends one command; a server error reply is thrown.
    @discardableResult
    public func command(_ arguments: RedisArgument...) throws -> RedisReply { try command(arguments) }

    /// Sends all commands in one write and reads all replies (one round trip). Server error replies stay in place
    /// as `.error`, so one failing command does not hide the others' results.
    public func pipeline(_ commands: [[RedisArgument]]) throws -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let context = try usableContext()
        for arguments in commands {
            let status = withArgv(arguments) { count, argv, lengths in redisAppendCommandArgv(context, count, argv, lengths) }
            try check(status, what: "pipeline append")
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for index in commands.indices {
            var raw: UnsafeMutableRawPointer?
            let status = redisGetReply(context, &raw)
            try check(status, what: "pipeline reply \(index + 1)/\(commands.count) (\(Self.name(of: commands[index])))")
            guard let raw else { throw RedisError(.protocol, "no reply", context: "pipeline") }
            replies.append(Self.reply(from: raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        return replies
    }

    /// Runs a blocking command (`BLPOP`, `BRPOP`, `XREAD BLOCK`, …) allowing `timeout` on top of the command timeout.
    public func blockingCommand(_ arguments: [RedisArgument], timeout: Duration) throws -> RedisReply {
        let context = try usableContext()
        try check(redisSetTimeout(context, Self.timeval(timeout + configuration.commandTimeout)), what: "set timeout")
        let reply = try command(arguments)
        if let context = self.context, context.pointee.err == 0 {
            try check(redisSetTimeout(context, Self.timeval(configuration.commandTimeout)), what: "set timeout")
        }
        return reply
    }

    // MARK: - Connecting

    private func open() throws {
        dropContext()
        let target = "connect \(configuration.redactedDescription)"
        guard let fresh = redisConnectWithTimeout(configuration.host, Int32(configuration.port), Self.timeval(configuration.connectTimeout)) else {
            throw RedisError(.connectionFailed, "could not allocate a connection", context: target)
        }
        if fresh.pointee.err != 0 {
            let message = Self.errorString(fresh)
            redisFree(fresh)
            throw RedisError(.connectionFailed, message, context: target)
        }
        context = fresh
        do {
            try check(redisSetTimeout(fresh, Self.timeval(configuration.commandTimeout)), what: "set timeout")
            if let password = configuration.password {
                var auth: [RedisArgument] = ["AUTH"]
                if let user = configuration.username { auth.append(RedisArgument(user)) }
                auth.append(RedisArgument(password))
                if case .error(let message) = try send(auth) {
                    throw RedisError(.authenticationFailed, message, context: target)
                }
            }
            if configuration.database != 0 {
                try command("SELECT", RedisArgument(configuration.database))
            }
        } catch {
            dropContext()
            throw error
        }
    }

    /// The live context, reconnecting first when the last one broke or the server closed it while idle.
    func usableContext() throws -> UnsafeMutablePointer<redisContext> {
        if closedByOwner { throw RedisError(.closed, "connection is closed", context: configuration.redactedDescription) }
        if let context, context.pointee.err == 0, !peerHasClosed(context) { return context }
        try open()
        guard let context else { throw RedisError(.closed, "connection is closed", context: configuration.redactedDescription) }
        return context
    }

    /// An idle RESP2 connection has nothing to read unless the server closed it (restart, timeout, CLIENT KILL).
    private func peerHasClosed(_ context: UnsafeMutablePointer<redisContext>) -> Bool {
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    private func dropContext() {
        if let context { redisFree(context) }
        context = nil
    }

    var rawContext: UnsafeMutablePointer<redisContext>? { context }

    // MARK: - Errors

    /// The single check every hiredis status code goes through.
    func check(_ status: Int32, what: String) throws {
        let failure = errno
        if status != REDIS_OK { throw failureError(what: what, errnoValue: failure) }
    }

    /// Builds the typed error from the context's error flags (the context is unusable afterwards).
    func failureError(what: String, errnoValue: Int32) -> RedisError {
        guard let context else { return RedisError(.closed, "connection is closed", context: what) }
        let message = Self.errorString(context)
        switch context.pointee.err {
        case REDIS_ERR_IO where errnoValue == EAGAIN || errnoValue == EWOULDBLOCK || message.contains("temporarily unavailable"):
            return RedisError(.timeout, "no reply within \(configuration.commandTimeout)", context: what)
        case REDIS_ERR_EOF: return RedisError(.io, message.isEmpty ? "server closed the connection" : message, context: what)
        case REDIS_ERR_PROTOCOL: return RedisError(.protocol, message, context: what)
        case 0: return RedisError(.io, "unknown failure (errno \(errnoValue))", context: what)
        default: return RedisError(.io, message, context: what)
        }
    }

    static func errorString(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafePointer(to: &context.pointee.errstr) { tuple in
            tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: context.pointee.errstr)) { String(cString: $0) }
        }
    }

    // MARK: - Encoding and decoding

    static func name(of arguments: [RedisArgument]) -> String {
        arguments.first.map { String(decoding: $0.bytes.prefix(32), as: UTF8.self).uppercased() } ?? "(empty)"
    }

    static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }

    /// Calls `body` with argv pointers and explicit lengths into one contiguous copy of the arguments.
    private func withArgv<T>(
        _ arguments: [RedisArgument],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> T
    ) -> T {
        var storage: [UInt8] = []
        storage.reserveCapacity(arguments.reduce(1) { $0 + $1.bytes.count })
        var lengths: [Int] = []
        lengths.reserveCapacity(arguments.count)
        for argument in arguments {
            storage.append(contentsOf: argument.bytes)
            lengths.append(argument.bytes.count)
        }
        storage.append(0)
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(lengths.count)
            var offset = 0
            for length in lengths {
                pointers.append(base + offset)
                offset += length
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { argvLengths in
                    body(Int32(arguments.count), argv.baseAddress!, argvLengths.baseAddress!)
                }
            }
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
