import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 14. The workers' PostgreSQL connections killed (pg_terminate_backend) every 2 s during a burst: lost 0,
    /// duplicated 0. The workers connect under an application name of their own, so the harness' own pooled
    /// connections (which the Python harness never held: it ran psql per query) are left alone.
    @Test("14. PostgreSQL connections killed every 2 s during a burst")
    func scenario14PostgresConnectionsKilled() async throws {
        try await ChaosScenario.run(
            number: 14, title: "PostgreSQL connections killed every 2 s during a burst",
            settings: ["WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"], latencyMilliseconds: 200
        ) { s in
            let applicationName = "countdown-chaos-worker"
            _ = try await s.startWorkers(2, ["DATABASE_URL": try s.system.database.url(applicationName: applicationName)])
            let due = try await s.seed(s.size(400, 3000))
            try await s.waitUntil(due)
            var rounds = 0
            var terminated = 0
            let deadline = ChaosScenario.now + s.size(30, 90)
            while try !s.allAccepted(), ChaosScenario.now < deadline {
                let rows = try await s.system.query("""
                    SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1) t
                    """, [applicationName])
                terminated += try rows[0].decode("n", as: Int.self)
                rounds += 1
                try await Task.sleep(for: .seconds(2))
            }
            _ = try await s.waitQuiet(timeout: s.size(90, 180))
            s.note("\(rounds) rounds of pg_terminate_backend, \(terminated) connections killed; ledger rows claimed more than once: "
                   + "\(try await s.ledgerReclaims()); settlements kept in memory and retried: \(s.outcomesKept())")
            s.check(rounds >= 2, "connections killed during the burst (\(rounds) rounds)")
            s.checkWorkersKeptRunning()
            return nil
        }
    }
}
