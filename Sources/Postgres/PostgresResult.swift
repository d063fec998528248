import CLibPQ

/// The one owner of a `PGresult*`; `deinit` frees it. Its rows are copied out into `PostgresRows`.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    /// The command tag, e.g. `INSERT 0 3` or `ROLLBACK`.
    var commandTag: String { String(cString: PQcmdStatus(handle)) }

    /// Rows inserted, updated, deleted, selected... (0 for commands that report none).
    var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// Copies every value out of the result.
    func rows() -> PostgresRows {
        let rowCount = Int(PQntuples(handle))
        let columnCount = Int(PQnfields(handle))
        var names: [String] = []
        var types: [PostgresType] = []
        for column in 0..<Int32(columnCount) {
            names.append(String(cString: PQfname(handle, column)))
            types.append(PostgresType(rawValue: PQftype(handle, column)))
        }
        var cells: [String?] = []
        cells.reserveCapacity(rowCount * columnCount)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(handle, row, column) != 0 {
                    cells.append(nil)
                } else {
                    let length = Int(PQgetlength(handle, row, column))
                    let bytes = UnsafeRawBufferPointer(start: PQgetvalue(handle, row, column), count: length)
                    cells.append(String(decoding: bytes, as: UTF8.self))
                }
            }
        }
        return PostgresRows(
            columns: PostgresColumns(names: names, types: types), cells: cells, affectedRows: affectedRows
        )
    }
}
