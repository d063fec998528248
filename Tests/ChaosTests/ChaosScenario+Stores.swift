import Foundation
import Redis
import TestSupport

/// Helpers of the scenarios that restart, flush or fail over the stores (2, 3, 4, 14, 16, 17, 18).
extension ChaosScenario {
    /// Live workers that still run.
    var workersAlive: Int { system.workers.filter(\.isRunning).count }

    /// Checks that no worker of the live list exited.
    func checkWorkersKeptRunning() {
        let alive = workersAlive
        check(alive == system.workers.count, "every worker kept running (\(alive)/\(system.workers.count))")
    }

    /// Two workers, `streams` streams due a few seconds from now, and a wait until `after` seconds past their due
    /// second: the burst the store scenarios break. Returns the due second and the starts accepted by then.
    func burstUnderway(_ streams: Int, after: Double) async throws -> (due: Double, before: Int) {
        _ = try await startWorkers(2)
        let due = try await seed(streams)
        try await waitUntil(due + after)
        return (due, try acceptedKeys().count)
    }

    /// A key of the delay queue in this system's namespace (`{ns}:q1:<name>`).
    func queueKey(_ name: String) -> String { "{\(system.namespace)}:q1:\(name)" }

    /// The live workers' "reconciler repaired the queue" lines logged at or after `since`: (seconds after `since`,
    /// the `added` count), oldest first.
    func reconcilerRepairs(since: Double) -> [(after: Double, added: String)] {
        workerLogLines("reconciler repaired the queue")
            .filter { Self.logTime($0) >= since }
            .map { (Self.logTime($0) - since, "\($0["added"] ?? "nil")") }
            .sorted { $0.after < $1.after }
    }

    /// Worker log lines (live and retired workers) that mention a READONLY reply, and how many workers logged any.
    func readOnlyLogLines() -> (lines: Int, workers: Int) {
        var lines = 0
        var workers = 0
        for worker in system.workers + system.retired {
            let count = worker.log.split(separator: "\n").filter { $0.hasPrefix("{") && ($0.contains("READONLY") || $0.contains("readOnly")) }.count
            lines += count
            workers += count > 0 ? 1 : 0
        }
        return (lines, workers)
    }

    /// Waits until every live worker has beaten its heartbeat (`{ns}:fleet:workers`, scored by Redis `TIME` in ms,
    /// the same clock here) into the current primary at or after `since`; returns the seconds from `since`. A failed
    /// read (the harness' own client meeting the failover) counts as not yet.
    func waitWorkersFollow(since: Double, timeout: Duration) async throws -> Double {
        var ids: [String] = []
        for worker in system.workers where worker.isRunning { ids.append(try await worker.workerID()) }
        let key = RedisArgument("{\(system.namespace)}:fleet:workers")
        try await TestSupport.waitUntil(timeout: timeout, every: .milliseconds(100), "every worker to beat into the new primary") {
            guard let values = try? await self.system.redis.command(["ZRANGE", key, "0", "-1", "WITHSCORES"], retry: .onceOnBrokenConnection).array
            else { return false }
            var beats: [String: Double] = [:]
            for index in stride(from: 0, to: values.count - 1, by: 2) {
                if let worker = values[index].string, let score = values[index + 1].string.flatMap(Double.init) { beats[worker] = score / 1000 }
            }
            return ids.allSatisfy { (beats[$0] ?? 0) >= since }
        }
        return Self.now - since
    }

    /// `run` on a Redis set of the scenario's own (`ownSentinelSet`), which the system's workers and harness client
    /// reach through its Sentinels; the set's description is the first note, and `body` gets the set too.
    static func runOnSentinelSet(
        number: Int, title: String, settings: [String: String], latencyMilliseconds: Int,
        _ body: (ChaosScenario, ThrowawaySentinelSet) async throws -> Set<StartKey>?
    ) async throws {
        let (set, note) = try await ownSentinelSet(number: number)
        defer { set.stop() }
        try await run(number: number, title: title, settings: settings, latencyMilliseconds: latencyMilliseconds, options: { $0.redis = .target(set) }) { s in
            s.note(note)
            return try await body(s, set)
        }
    }

    /// Starts a scenario's own primary, replica and three Sentinels (master `chaos<N>`), before its system (which
    /// is built pointing at them); returns the set and the note that describes it.
    private static func ownSentinelSet(number: Int) async throws -> (set: ThrowawaySentinelSet, note: String) {
        let began = Date()
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("chaos\(number)-redis"))
        let set = try await ThrowawaySentinelSet.start(directory: directory, masterName: "chaos\(number)")
        let note = "own Redis set: primary :\(set.primaryPort), replica :\(set.replicaPort), three Sentinels (quorum 2, down-after "
            + "\(set.downAfterMilliseconds) ms), ready in \(fixed(Date().timeIntervalSince(began), 1))s; its logs in \(directory)"
        return (set, note)
    }
}
