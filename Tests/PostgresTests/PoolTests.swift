import BlockingIO
import Postgres
import Testing

@Suite struct PoolTests {
    @Test func neverOpensMoreThanTheBoundUnderLoad() async throws {
        try await withTestClient(maxConnections: 4) { client, _ in
            let inFlight = Locked((now: 0, peak: 0))
            let sessionCounts = try await withThrowingTaskGroup(of: Int.self) { group in
                for user in 0..<50 {
                    group.addTask {
                        try await client.withConnection { connection in
                            inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                            defer { inFlight.withLock { $0.now -= 1 } }
                            _ = try connection.query("SELECT pg_sleep(0.01), $1::int AS user", [user])
                            let sessions = try connection.query("""
                                SELECT count(*) AS n FROM pg_stat_activity
                                WHERE datname = current_database() AND backend_type = 'client backend'
                                """)
                            return try sessions.first?.decode("n", as: Int.self) ?? 0
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(sessionCounts.count == 50)
            #expect(sessionCounts.allSatisfy { (1...4).contains($0) }, "\(sessionCounts)")
            #expect(inFlight.value.peak <= 4)
            #expect(inFlight.value.peak >= 2)
            #expect(client.connectionsInUse == 0)
        }
    }

    @Test func closedClientRefusesWork() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query("SELECT 1")
            client.close()
            let error = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
            #expect(error?.code == .closed)
        }
    }
}
