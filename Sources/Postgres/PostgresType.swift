/// A PostgreSQL type, by its OID: how parameters are declared to the server and how columns report themselves.
public struct PostgresType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Lets the server infer the parameter's type from where it is used.
    public static let unknown = PostgresType(rawValue: 0)
    public static let bool = PostgresType(rawValue: 16)
    public static let bytea = PostgresType(rawValue: 17)
    public static let int8 = PostgresType(rawValue: 20)
    public static let int4 = PostgresType(rawValue: 23)
    public static let text = PostgresType(rawValue: 25)
    public static let float8 = PostgresType(rawValue: 701)
    public static let timestamptz = PostgresType(rawValue: 1184)
    public static let uuid = PostgresType(rawValue: 2950)

    private static let names: [UInt32: String] = [
        0: "unknown", 16: "bool", 17: "bytea", 20: "int8", 21: "int2", 23: "int4", 25: "text", 700: "float4",
        701: "float8", 1043: "varchar", 1082: "date", 1114: "timestamp", 1184: "timestamptz", 1700: "numeric",
        2950: "uuid", 3802: "jsonb", 114: "json", 18: "char", 19: "name", 26: "oid",
    ]

    public var description: String { Self.names[rawValue] ?? "type \(rawValue)" }
}
