import Postgres

extension DemoSeed {
    /// How many users, devices and streams are not demo rows (ids not starting with `demo-`): a database
    /// holding any is not a demo database, and `seed-demo` refuses it unless forced.
    public static func foreignRows(_ database: PostgresClient) async throws -> Int {
        try await database.query("""
            SELECT (SELECT count(*) FROM users WHERE id NOT LIKE 'demo-%')
                 + (SELECT count(*) FROM devices WHERE device_id NOT LIKE 'demo-%')
                 + (SELECT count(*) FROM streams WHERE id NOT LIKE 'demo-%') AS n
            """).first?.decode("n", as: Int.self) ?? 0
    }
}
