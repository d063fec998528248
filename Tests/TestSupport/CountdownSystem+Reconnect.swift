import Foundation
import Postgres
import Redis

extension CountdownSystem {
    /// After a server restart, crash or failover: waits until every connection of the harness' own pools answers
    /// again. `query`, `execute` and `queueCounts` do not retry (a retried write could run twice), so a connection the
    /// server dropped would fail the next harness call that borrows it; here each pool is borrowed whole at once
    /// (each connection held a moment, so the borrows overlap), dropped connections fail and are replaced, until a
    /// round in which all answer.
    public func reconnect(timeout: Duration = .seconds(60)) async throws {
        let db = self.db
        let redis = self.redis
        try await waitUntil(timeout: timeout, every: .milliseconds(100), "the harness' PostgreSQL and Redis connections to answer again") {
            async let postgres = Self.allAnswer(db.maxConnections) {
                try await db.withConnection { connection in
                    usleep(50_000)
                    _ = try connection.query("SELECT 1")
                }
            }
            async let keys = Self.allAnswer(redis.poolSize) {
                try await redis.withConnection { connection in
                    usleep(50_000)
                    _ = try connection.command(["PING"])
                }
            }
            let (postgresAnswers, redisAnswers) = await (postgres, keys)
            return postgresAnswers && redisAnswers
        }
    }

    /// Runs `probe` `count` times at once; whether every run succeeded.
    private static func allAnswer(_ count: Int, _ probe: @escaping @Sendable () async throws -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count { group.addTask { (try? await probe()) != nil } }
            return await group.reduce(true) { $0 && $1 }
        }
    }
}
