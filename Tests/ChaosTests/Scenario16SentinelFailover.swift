import Foundation
import Redis
import Testing
import TestSupport

extension ChaosSuite {
    /// 16. The Redis primary SIGKILLed mid-burst under three Sentinels (quorum 2): the replica is promoted and the
    /// workers follow. The replica stopped replicating 1 s before the kill (a replica that lags), so what the primary
    /// took in that second dies with it: acknowledgements, claims, and the jobs of streams created then, which only
    /// the reconciler can bring back. Lost 0, duplicated 0.
    @Test("16. Sentinel failover: the primary SIGKILLed mid-burst, a lagging replica promoted")
    func scenario16SentinelFailover() async throws {
        try await ChaosScenario.runOnSentinelSet(
            number: 16, title: "Sentinel failover: the primary SIGKILLed mid-burst, a lagging replica promoted",
            settings: ["WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"], latencyMilliseconds: 200
        ) { s, sentinels in
            let late = s.size(20, 100)
            let latePeople = s.people + "late"
            try await s.system.seedPeople(prefix: latePeople, streams: late, tokenBase: 50_000_000)
            let (due, before) = try await s.burstUnderway(s.size(300, 2000), after: 0.5)
            // From here the replica stops replicating: what the primary takes now is lost with it.
            try await sentinels.command(on: sentinels.replicaPort, ["REPLICAOF", "NO", "ONE"])
            let detached = ChaosScenario.now
            let lateDue = (try await s.system.databaseNow()).rounded(.up) + 8
            try await s.system.seedStreams(
                peoplePrefix: latePeople, streamPrefix: s.prefix + "late", count: late, plannedAtEpoch: lateDue + Double(s.system.startLead))
            try await s.snapshotExpected()
            try await s.system.waitOutboxDrained(timeout: .seconds(10))
            let lateJob = RedisArgument("start:\(s.prefix)late1")
            let data = RedisArgument(s.queueKey("data"))
            let onPrimary = try await sentinels.command(on: sentinels.primaryPort, ["HEXISTS", data, lateJob]).integer ?? -1
            let onReplica = try await sentinels.command(on: sentinels.replicaPort, ["HEXISTS", data, lateJob]).integer ?? -1
            s.check(onPrimary == 1 && onReplica == 0, "the late streams' jobs were on the primary only (primary \(onPrimary), replica \(onReplica))")
            try await s.waitUntil(detached + 1)
            let atKill = try s.acceptedKeys().count
            try await sentinels.kill(sentinels.primaryPort)
            let killed = ChaosScenario.now
            let took = try await sentinels.waitForPrimary(sentinels.replicaPort)
            let followed = try await s.waitWorkersFollow(since: killed, timeout: .seconds(60))
            s.note("replica detached \(ChaosScenario.signed(detached - due, 1))s after the due second with \(before) of \(s.expected.count) starts "
                   + "accepted; \(late) streams due at \(String(format: "%+d", Int(lateDue - due)))s created while it lagged; primary SIGKILLed "
                   + "\(ChaosScenario.fixed(killed - detached, 1))s later with \(atKill) accepted")
            s.note("the Sentinels named the replica the primary \(ChaosScenario.fixed(took, 1))s after the kill; every worker's heartbeat reached it "
                   + "\(ChaosScenario.fixed(followed, 1))s after the kill")
            try await s.waitUntil(lateDue + 0.5)
            _ = try await s.waitQuiet(timeout: s.size(90, 180))
            let repairs = s.reconcilerRepairs(since: killed)
            let repaired = repairs.map { "+\(ChaosScenario.fixed($0.after, 1))s added \($0.added)" }.joined(separator: "; ")
            s.note("reconciler (RECONCILE_INTERVAL_SECONDS=\(s.system.settings["RECONCILE_INTERVAL_SECONDS"] ?? "?"), so only the run a "
                   + "failover starts can help) after the kill: " + (repaired.isEmpty ? "no repair" : repaired))
            s.check(!repairs.isEmpty, "a reconciler run rebuilt the jobs lost with the primary")
            s.checkWorkersKeptRunning()
            return nil
        }
    }
}
