/// A one-dimensional array parameter in PostgreSQL's array literal form (`{"a","b",NULL}`); cast it in SQL
/// (`$1::text[]`, `$1::bigint[]`). Elements are quoted and escaped, so any text round-trips; `nil` is NULL.
public struct PostgresTextArray: PostgresEncodable, Equatable {
    public let elements: [String?]

    public init(_ elements: [String?]) { self.elements = elements }
    public init(_ elements: [String]) { self.elements = elements.map { $0 } }

    public static var postgresType: PostgresType { .unknown }

    public var postgresText: String {
        var text = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { text += "," }
            guard let element else {
                text += "NULL"
                continue
            }
            text += "\""
            for character in element.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }
}
