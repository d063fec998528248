import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 3. Redis FLUSHALL an hour before the starts: the reconciler rebuilds the jobs; lost 0. On a Redis of its own.
    @Test("3. Redis FLUSHALL an hour before the starts (reconcile)")
    func scenario03RedisFlush() async throws {
        try await ChaosScenario.run(
            number: 3, title: "Redis FLUSHALL an hour before the starts (reconcile)", settings: ["RECONCILE_INTERVAL_SECONDS": "5"],
            latencyMilliseconds: 30, options: { $0.redis = .own }
        ) { s in
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(300, 1000), dueIn: s.size(14, 20))
            let counts = try await s.system.queueStats()
            let waiting = counts.claimableNow + counts.delayed
            try await s.system.redis.command(["FLUSHALL"])
            let flushedAt = ChaosScenario.now
            let emptied = try await s.system.queueStats()
            let after = emptied.claimableNow + emptied.delayed
            s.note("FLUSHALL \(ChaosScenario.fixed(due - flushedAt, 1))s before the T-60 due second (planned starts an hour later): \(waiting) jobs -> \(after)")
            let streams = Set(s.expected.map(\.stream)).count
            s.check(waiting >= streams && after == 0, "the flush emptied a queue that held every start job")
            _ = try await s.waitQuiet(timeout: s.size(60, 120))
            let repairs = s.reconcilerRepairs(since: flushedAt)
            if !repairs.isEmpty {
                s.note("reconciler (RECONCILE_INTERVAL_SECONDS=\(s.system.settings["RECONCILE_INTERVAL_SECONDS"] ?? "?")) repaired the queue: "
                       + repairs.map { "+\(ChaosScenario.fixed($0.after, 1))s added \($0.added)" }.joined(separator: "; "))
            }
            s.check(!repairs.isEmpty, "a reconciler run rebuilt the jobs")
            return nil
        }
    }
}
