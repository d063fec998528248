import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 4. PostgreSQL stopped (immediate) and restarted during a burst: lost 0, workers never exit. On a PostgreSQL of
    /// its own (`.own`, synchronous_commit on): the shared one serves other test targets.
    @Test("4. PostgreSQL restart during a burst")
    func scenario04PostgresRestart() async throws {
        try await ChaosScenario.run(
            number: 4, title: "PostgreSQL restart during a burst", settings: ["WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5"],
            latencyMilliseconds: 60, options: { $0.postgres = .own }
        ) { s in
            guard let postgres = s.system.ownPostgres else { throw HarnessError("the system has no PostgreSQL of its own") }
            let (_, before) = try await s.burstUnderway(s.size(300, 2000), after: 1)
            _ = try await offThePool { postgres.stopImmediately() }
            let down = ChaosScenario.now
            let exits = ExitWatch(s.system)
            while ChaosScenario.now - down < 3 {
                exits.look()
                try await Task.sleep(for: .milliseconds(100))
            }
            try await offThePool { try postgres.start() }
            s.note("PostgreSQL stopped (-m immediate) 1s after the due second with \(before) of \(s.expected.count) starts accepted, "
                   + "started again after \(ChaosScenario.fixed(ChaosScenario.now - down, 1))s")
            _ = try await s.waitQuiet(timeout: s.size(90, 180)) { exits.look() }
            exits.look()
            let exited = exits.count
            s.check(exited == 0, "no worker exited (\(exited) did)")
            // Outcomes of pushes sent while PostgreSQL was away are kept in memory and written once it is back.
            s.note("ledger rows claimed more than once: \(try await s.ledgerReclaims()); settlements kept in memory and retried: \(s.outcomesKept())")
            return nil
        }
    }
}
