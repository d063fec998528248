/// A RESP2 reply.
public enum RedisReply: Sendable, Equatable {
    case status(String)
    case error(String)
    case integer(Int64)
    case bulk([UInt8])
    case null
    case array([RedisReply])

    /// The text of a bulk or status reply (bulk bytes decoded as UTF-8), else `nil`.
    public var string: String? {
        switch self {
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    /// The bytes of a bulk reply (or a status reply's text), else `nil`.
    public var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): bytes
        case .status(let text): Array(text.utf8)
        default: nil
        }
    }

    /// An integer reply, or a bulk/status reply holding a decimal integer.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bulk, .status: string.flatMap { Int64($0) }
        default: nil
        }
    }

    /// The elements of an array reply, else `nil`.
    public var array: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// Throws the typed error for an error reply; returns the reply otherwise.
    @discardableResult
    public func throwIfError(context: String = "") throws(RedisError) -> RedisReply {
        if case .error(let message) = self { throw RedisError.fromServer(message, context: context) }
        return self
    }
}

extension RedisError {
    /// The typed error for a server error reply (`NOSCRIPT …`, `WRONGPASS …`, anything else).
    static func fromServer(_ message: String, context: String) -> RedisError {
        if message.hasPrefix("NOSCRIPT") { return RedisError(.noScript, message, context: context) }
        if message.hasPrefix("READONLY") { return RedisError(.readOnly, message, context: context) }
        if message.hasPrefix("WRONGPASS") || message.hasPrefix("NOAUTH") || message.contains("invalid password") {
            return RedisError(.authenticationFailed, message, context: context)
        }
        return RedisError(.server, message, context: context)
    }
}
