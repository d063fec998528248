import Foundation

/// A Swift value that can be sent as a statement parameter, in PostgreSQL's text format.
/// `nil` in a parameter list is sent as SQL NULL.
public protocol PostgresEncodable: Sendable {
    /// The type the server reads the parameter as (`.unknown` lets it infer the type from context).
    static var postgresType: PostgresType { get }
    /// The value's text form.
    var postgresText: String { get }
}

extension String: PostgresEncodable {
    public static var postgresType: PostgresType { .unknown }
    public var postgresText: String { self }
}

extension Substring: PostgresEncodable {
    public static var postgresType: PostgresType { .unknown }
    public var postgresText: String { String(self) }
}

extension Int: PostgresEncodable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    public static var postgresType: PostgresType { .int8 }
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    public static var postgresType: PostgresType { .int4 }
    public var postgresText: String { String(self) }
}

extension Bool: PostgresEncodable {
    public static var postgresType: PostgresType { .bool }
    public var postgresText: String { self ? "t" : "f" }
}

extension Double: PostgresEncodable {
    public static var postgresType: PostgresType { .float8 }
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        return String(self)
    }
}

extension Date: PostgresEncodable {
    public static var postgresType: PostgresType { .timestamptz }
    /// ISO 8601 in UTC with microseconds, e.g. `2030-01-02T03:04:05.678901+00:00`.
    public var postgresText: String { PostgresTimestamp.format(self) }
}

extension Data: PostgresEncodable {
    public static var postgresType: PostgresType { .bytea }
    public var postgresText: String { PostgresBytea.format(self) }
}

extension Array: PostgresEncodable where Element == UInt8 {
    public static var postgresType: PostgresType { .bytea }
    public var postgresText: String { PostgresBytea.format(self) }
}

extension UUID: PostgresEncodable {
    public static var postgresType: PostgresType { .uuid }
    public var postgresText: String { uuidString.lowercased() }
}
