@testable import Postgres
import Testing

/// A column is found by name whether the result is narrow (searched in order) or wide (a table), always the first
/// of repeated names; rows decode by name and by position alike.
@Suite struct ColumnLookupTests {
    @Test(arguments: [3, 16, 17, 40])
    func findsTheFirstColumnOfAName(width: Int) {
        var names = (0..<width).map { "column_\($0)" }
        names[width - 1] = "column_0"
        let columns = PostgresColumns(names: names, types: Array(repeating: .text, count: width))
        #expect(columns.index(of: "column_0") == 0)
        #expect(columns.index(of: "column_1") == 1)
        #expect(columns.index(of: "column_\(width - 2)") == width - 2)
        #expect(columns.index(of: "absent") == nil)
        #expect(columns.index(of: "") == nil)
    }

    @Test func rowsDecodeByNameAndPositionWithTheSameErrors() throws {
        let columns = PostgresColumns(names: ["id", "count", "maybe"], types: [.text, .int8, .text])
        let row = PostgresRow(columns: columns, cells: ["s1", "42", nil], index: 0)
        #expect(try row.decode("id", as: String.self) == "s1")
        #expect(try row.decode(1, as: Int.self) == 42)
        #expect(try row.decode("maybe", as: String?.self) == nil)
        #expect(throws: PostgresError.self) { try row.decode("maybe", as: String.self) }
        #expect(throws: PostgresError.self) { try row.decode("id", as: Int.self) }
        #expect(throws: PostgresError.self) { try row.decode("nope", as: String.self) }
        #expect(throws: PostgresError.self) { try row.decode(3, as: String.self) }
        #expect(throws: PostgresError.self) { try row.decode(-1, as: String.self) }
        do {
            _ = try row.decode("maybe", as: String.self)
        } catch let error as PostgresError {
            #expect(error.code == .decodeFailed)
            #expect("\(error)".contains("column 'maybe' is NULL in row 0"))
        }
    }
}
