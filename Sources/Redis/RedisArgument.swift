/// One binary-safe element of a command's argv.
public struct RedisArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { bytes = Array(string.utf8) }
    public init(_ value: Int) { bytes = Array(String(value).utf8) }
    public init(_ value: Int64) { bytes = Array(String(value).utf8) }
    public init(_ value: Double) { bytes = Array(String(value).utf8) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }
}
