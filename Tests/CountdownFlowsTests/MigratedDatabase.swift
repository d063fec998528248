import CountdownStore
import Postgres
import TestSupport

/// A fresh migrated database for one test, dropped afterwards (also on failure), after the start settlers of its
/// contexts stopped.
enum MigratedDatabase {
    static func with(prefix: String, _ body: (PostgresClient) async throws -> Void) async throws {
        try await with(prefix: prefix) { _, client in try await body(client) }
    }

    /// The same, also handing over the database itself (its name, administration).
    static func with(prefix: String, _ body: (TestDatabase, PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.withFresh(prefix: prefix) { database, client in
            _ = try await Migrator().migrate(client)
            do {
                try await body(database, client)
            } catch {
                await RunningSettlers.stop(on: client)
                throw error
            }
            await RunningSettlers.stop(on: client)
        }
    }
}
