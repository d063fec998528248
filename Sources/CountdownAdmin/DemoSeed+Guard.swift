import CountdownStore
import Postgres

extension DemoSeed {
    /// How many users, devices and streams are not demo rows (ids not starting with `demo-`): a database
    /// holding any is not a demo database, and `seed-demo` refuses it unless forced.
    public static func foreignRows(_ database: PostgresClient) async throws -> Int {
        try await database.withConnection { try DemoSeedQueries.foreignRows(on: $0) }
    }
}
