/// One row of a result, decoded column by column into Swift types.
public struct PostgresRow: Sendable {
    public let columns: PostgresColumns
    /// Position of the row in its result.
    public let index: Int
    @usableFromInline let cells: ArraySlice<String?>

    init(columns: PostgresColumns, cells: ArraySlice<String?>, index: Int) {
        self.columns = columns
        self.cells = cells
        self.index = index
    }

    /// Decodes the column called `column`. NULL decodes only into an Optional.
    @inlinable
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let position = columns.index(of: column) else { throw noSuchColumn(column) }
        return try decode(position, as: type)
    }

    /// Decodes the column at `position` (0-based). NULL decodes only into an Optional.
    @inlinable
    public func decode<T: PostgresDecodable>(_ position: Int, as type: T.Type = T.self) throws -> T {
        guard position >= 0 && position < columns.count else { throw noSuchPosition(position) }
        guard let text = cells[cells.startIndex + position] else {
            if let null = T.postgresNull { return null }
            throw unexpectedNull(position, T.self)
        }
        guard let value = T(postgresText: text, type: columns.types[position]) else { throw invalidValue(position, T.self) }
        return value
    }

    // The errors are built out of line: the decode calls above are inlined into every caller.

    @usableFromInline
    func noSuchColumn(_ column: String) -> PostgresError {
        PostgresError(code: .decodeFailed, what: "decode column '\(column)'",
                      message: "the row has no such column; it has \(columns.names.joined(separator: ", "))")
    }

    @usableFromInline
    func noSuchPosition(_ position: Int) -> PostgresError {
        PostgresError(code: .decodeFailed, what: "decode column \(position)", message: "the row has only \(columns.count) columns")
    }

    @usableFromInline
    func unexpectedNull(_ position: Int, _ type: Any.Type) -> PostgresError {
        let name = columns.names[position]
        return PostgresError(code: .decodeFailed, what: "decode column '\(name)'",
                             message: "column '\(name)' is NULL in row \(index) but \(type) cannot hold NULL; decode an Optional")
    }

    @usableFromInline
    func invalidValue(_ position: Int, _ type: Any.Type) -> PostgresError {
        let name = columns.names[position]
        return PostgresError(code: .decodeFailed, what: "decode column '\(name)'",
                             message: "column '\(name)' (\(columns.types[position])) in row \(index) does not hold a valid \(type)")
    }
}
