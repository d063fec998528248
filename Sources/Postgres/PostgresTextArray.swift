/// A one-dimensional array parameter in PostgreSQL's array literal form (`{"a","b",NULL}`); cast it in SQL
/// (`$1::text[]`, `$1::bigint[]`). Elements are quoted and escaped, so any text round-trips; `nil` is NULL.
public struct PostgresTextArray: PostgresEncodable, Equatable {
    public let elements: [String?]

    public init(_ elements: [String?]) { self.elements = elements }
    public init(_ elements: [String]) { self.elements = elements.map { $0 } }

    public static var postgresType: PostgresType { .unknown }

    public var postgresText: String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(elements.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            guard let element else {
                bytes.append(contentsOf: "NULL".utf8)
                continue
            }
            bytes.append(UInt8(ascii: "\""))
            Self.appendEscaped(element, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `element` with `"` and `\` escaped by a backslash, copied a run at a time (tokens are one run).
    private static func appendEscaped(_ element: String, to bytes: inout [UInt8]) {
        var element = element
        element.withUTF8 { utf8 in
            var run = 0
            for index in utf8.indices where utf8[index] == UInt8(ascii: "\"") || utf8[index] == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                bytes.append(UInt8(ascii: "\\"))
                run = index
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        }
    }
}
