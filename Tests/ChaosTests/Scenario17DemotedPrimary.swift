import Foundation
import Redis
import Testing
import TestSupport

extension ChaosSuite {
    /// 17. The primary demoted under the workers mid-burst: the replica promoted (REPLICAOF NO ONE), the live old
    /// primary made its replica (REPLICAOF), then the Sentinels told (SENTINEL FAILOVER). Workers writing to the old
    /// primary get READONLY and must find the new one. Lost 0, duplicated 0.
    @Test("17. the primary demoted under the workers mid-burst (READONLY)")
    func scenario17DemotedPrimary() async throws {
        try await ChaosScenario.runOnSentinelSet(
            number: 17, title: "the primary demoted under the workers mid-burst (READONLY)",
            settings: ["WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"], latencyMilliseconds: 200
        ) { s, sentinels in
            let (due, before) = try await s.burstUnderway(s.size(300, 2000), after: 0.5)
            let old = sentinels.primaryPort
            let new = sentinels.replicaPort
            try await sentinels.command(on: new, ["REPLICAOF", "NO", "ONE"])
            try await sentinels.command(on: old, ["REPLICAOF", "127.0.0.1", RedisArgument(new)])
            let demoted = ChaosScenario.now
            // The Sentinels still name the old primary until told; meanwhile clients find it a replica (ROLE, READONLY).
            try await Task.sleep(for: .seconds(1))
            try await sentinels.command(on: sentinels.sentinelPorts[0], ["SENTINEL", "FAILOVER", RedisArgument(sentinels.masterName)])
            try await sentinels.waitForPrimary(new)
            let named = ChaosScenario.now
            let followed = try await s.waitWorkersFollow(since: demoted, timeout: .seconds(60))
            s.note("primary demoted \(ChaosScenario.signed(demoted - due, 1))s after the due second with \(before) of \(s.expected.count) starts "
                   + "accepted; SENTINEL FAILOVER 1s later; the Sentinels named the new primary \(ChaosScenario.fixed(named - demoted, 1))s after the demotion; "
                   + "every worker's heartbeat reached it \(ChaosScenario.fixed(followed, 1))s after the demotion")
            _ = try await s.waitQuiet(timeout: s.size(90, 180))
            let (lines, workers) = s.readOnlyLogLines()
            s.note("\(lines) worker log lines mention READONLY, from \(workers) of \(s.system.workers.count) workers")
            s.check(lines > 0, "workers met READONLY replies")
            s.checkWorkersKeptRunning()
            return nil
        }
    }
}
