import CountdownStore
import Postgres
import TestSupport

/// A fresh migrated database for one test, dropped afterwards (also on failure).
enum MigratedDatabase {
    static func with(prefix: String, _ body: (PostgresClient) async throws -> Void) async throws {
        let database = try await TestDatabase.create(prefix: prefix)
        let client = PostgresClient(configuration: database.configuration, maxConnections: 2)
        do {
            _ = try await Migrator().migrate(client)
            try await body(client)
            client.close()
            try await database.drop()
        } catch {
            client.close()
            try? await database.drop()
            throw error
        }
    }
}
