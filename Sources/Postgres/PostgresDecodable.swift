import Foundation

/// A Swift value that a column's text form can be decoded into.
public protocol PostgresDecodable: Sendable {
    /// Decodes the text form of a non-NULL value; nil when the text is not a valid value of this type.
    init?(postgresText text: String, type: PostgresType)
    /// What SQL NULL decodes to, or nil when this type cannot hold NULL (every non-optional type).
    static var postgresNull: Self? { get }
}

extension PostgresDecodable {
    public static var postgresNull: Self? { nil }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) {
        guard let value = Wrapped(postgresText: text, type: type) else { return nil }
        self = .some(value)
    }

    public static var postgresNull: Wrapped?? { .some(.none) }
}

extension String: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) { self = text }
}

extension Int: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) { self.init(text) }
}

extension Int64: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) { self.init(text) }
}

extension Int32: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) { self.init(text) }
}

extension Bool: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension Double: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default: self.init(text)
        }
    }
}

extension Date: PostgresDecodable {
    /// Reads `timestamptz` (any offset), `timestamp` (taken as UTC) and `date` (midnight UTC).
    public init?(postgresText text: String, type: PostgresType) {
        guard let date = PostgresTimestamp.parse(text) else { return nil }
        self = date
    }
}

extension Data: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) {
        guard let bytes = PostgresBytea.parse(text) else { return nil }
        self.init(bytes)
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    public init?(postgresText text: String, type: PostgresType) {
        guard let bytes = PostgresBytea.parse(text) else { return nil }
        self = bytes
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresText text: String, type: PostgresType) { self.init(uuidString: text) }
}
