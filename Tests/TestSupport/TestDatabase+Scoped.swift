import Postgres

extension TestDatabase {
    /// Runs `body` with a fresh database and a client of `maxConnections`, then closes the client and drops the
    /// database, whether `body` threw or not.
    public static func withFresh(prefix: String, maxConnections: Int = 2,
                                 _ body: (TestDatabase, PostgresClient) async throws -> Void) async throws {
        let database = try await create(prefix: prefix)
        let client = PostgresClient(configuration: database.configuration, maxConnections: maxConnections)
        do {
            try await body(database, client)
        } catch {
            client.close()
            try? await database.drop()
            throw error
        }
        client.close()
        try await database.drop()
    }
}
