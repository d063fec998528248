import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 18. `pause --kind start` before the starts are due, Redis FLUSHALL, `countdown-admin reconcile`: nothing is
    /// sent while paused (the pause lives in PostgreSQL; the reconcile and every worker mirror it back into Redis);
    /// then `resume`: lost 0, duplicated 0. On a Redis of its own.
    @Test("18. pause starts, Redis FLUSHALL, reconcile: nothing sent until resume")
    func scenario18PauseRedisLoss() async throws {
        try await ChaosScenario.run(
            number: 18, title: "pause starts, Redis FLUSHALL, reconcile: nothing sent until resume", settings: [:],
            latencyMilliseconds: 30, options: { $0.redis = .own }
        ) { s in
            let hold = s.size(6.0, 20.0)
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(100, 500), dueIn: s.size(8, 12))
            _ = try await s.system.adminJSON(["pause", "--kind", "start", "--reason", "chaos", "--yes"])
            try await s.system.redis.command(["FLUSHALL"])
            let flushedAt = ChaosScenario.now
            let report = try await s.system.adminJSON(["reconcile"]) as? [String: Any] ?? [:]
            try await s.waitUntil(max(due, flushedAt) + hold)
            let sent = try s.acceptedKeys().count
            let stats = try await s.system.adminJSON(["stats"]) as? [String: Any] ?? [:]
            let paused = (stats["paused"] as? [[String: Any]] ?? []).map { $0["kind"] as? String ?? "?" }
            let heldJobs = stats["pausedJobs"] as? Int ?? 0
            s.note("paused, FLUSHALL \(ChaosScenario.fixed(due - flushedAt, 1))s before the due second, reconcile added \(report["added"] ?? "nil"); "
                   + "\(Int(hold))s past the due second: \(sent) starts accepted, stats (PostgreSQL) showed \(paused) paused with "
                   + "\(stats["pausedJobs"] ?? "nil") held jobs")
            s.check(sent == 0, "nothing sent while paused, after Redis lost its data (\(sent) starts)")
            s.check(paused == ["start"], "stats read the pause from PostgreSQL")
            s.check(heldJobs > 0, "the rebuilt start jobs were held")
            _ = try await s.system.adminJSON(["resume"])
            _ = try await s.waitQuiet(timeout: s.size(60, 120))
            return nil
        }
    }
}
