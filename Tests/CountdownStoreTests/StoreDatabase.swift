import CountdownStore
import Postgres
import TestSupport

/// A fresh database of one test, migrated by the project's `Migrator`, dropped afterwards (also on failure).
/// A test that needs another writer opens a second `PostgresConnection` on `client.configuration`.
enum StoreDatabase {
    static func with(prefix: String, _ body: (PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.withFresh(prefix: prefix) { _, client in
            _ = try await Migrator().migrate(client)
            try await body(client)
        }
    }
}

extension PostgresClient {
    /// Runs several statements (test rows), in one transaction.
    func seed(_ sql: String) async throws {
        try await transaction { try $0.executeScript(sql) }
    }

    /// The first column of every row of `sql` as text: what a test compares a table's contents with (build the
    /// column with `concat_ws` and order the rows).
    func lines(_ sql: String) async throws -> [String] {
        try await query(sql).map { try $0.decode(0, as: String.self) }
    }
}
