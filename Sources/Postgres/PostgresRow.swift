/// One row of a result, decoded column by column into Swift types.
public struct PostgresRow: Sendable {
    public let columns: PostgresColumns
    /// Position of the row in its result.
    public let index: Int
    private let cells: ArraySlice<String?>

    init(columns: PostgresColumns, cells: ArraySlice<String?>, index: Int) {
        self.columns = columns
        self.cells = cells
        self.index = index
    }

    /// Decodes the column called `column`. NULL decodes only into an Optional.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let position = columns.index(of: column) else {
            throw PostgresError(
                code: .decodeFailed, what: "decode column '\(column)'",
                message: "the row has no such column; it has \(columns.names.joined(separator: ", "))"
            )
        }
        return try decode(position, as: type)
    }

    /// Decodes the column at `position` (0-based). NULL decodes only into an Optional.
    public func decode<T: PostgresDecodable>(_ position: Int, as type: T.Type = T.self) throws -> T {
        guard columns.names.indices.contains(position) else {
            throw PostgresError(
                code: .decodeFailed, what: "decode column \(position)",
                message: "the row has only \(columns.count) columns"
            )
        }
        let name = columns.names[position]
        let columnType = columns.types[position]
        guard let text = cells[cells.startIndex + position] else {
            if let null = T.postgresNull { return null }
            throw PostgresError(
                code: .decodeFailed, what: "decode column '\(name)'",
                message: "column '\(name)' is NULL in row \(index) but \(T.self) cannot hold NULL; decode an Optional"
            )
        }
        guard let value = T(postgresText: text, type: columnType) else {
            throw PostgresError(
                code: .decodeFailed, what: "decode column '\(name)'",
                message: "column '\(name)' (\(columnType)) in row \(index) does not hold a valid \(T.self)"
            )
        }
        return value
    }
}
