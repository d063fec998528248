/// The rows a statement returned, copied out of libpq: a plain value that can cross threads.
public struct PostgresRows: RandomAccessCollection, Sendable {
    public let columns: PostgresColumns
    /// What the command tag reports (rows inserted, updated, deleted or selected).
    public let affectedRows: Int
    private let cells: [String?]

    init(columns: PostgresColumns, cells: [String?], affectedRows: Int) {
        self.columns = columns
        self.cells = cells
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.count == 0 ? 0 : cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        let start = position * columns.count
        return PostgresRow(columns: columns, cells: cells[start..<start + columns.count], index: position)
    }
}
