import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 2. Redis killed and restarted (AOF, appendfsync everysec) during a burst: lost 0, duplicated ≤ the ledger rows
    /// claimed again. On a Redis of its own (`.own`): the shared one serves other test targets.
    @Test("2. Redis restart during a burst (AOF)")
    func scenario02RedisRestart() async throws {
        try await ChaosScenario.run(
            number: 2, title: "Redis restart during a burst (AOF)", settings: ["WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5"],
            latencyMilliseconds: 60, options: { $0.redis = .own }
        ) { s in
            // Its own Redis runs with appendfsync everysec, as in production: the crash may lose the last second's writes.
            guard let redis = s.system.ownRedis else { throw HarnessError("the system has no Redis of its own") }
            let (due, before) = try await s.burstUnderway(s.size(300, 2000), after: 1)
            try await redis.crash()
            let down = ChaosScenario.now
            try await Task.sleep(for: .seconds(2))
            try await redis.startInBackground()
            let now = ChaosScenario.now
            s.note("Redis SIGKILLed \(ChaosScenario.fixed(now - due - 2, 1))s after the due second with \(before) of \(s.expected.count) starts accepted, "
                   + "restarted from its AOF after \(ChaosScenario.fixed(now - down, 1))s")
            _ = try await s.waitQuiet(timeout: s.size(90, 180))
            s.checkWorkersKeptRunning()
            s.duplicateBound = try await s.ledgerReclaims()
            s.duplicateBoundText = "≤ \(s.duplicateBound) re-claimed"
            return nil
        }
    }
}
