import DelayQueue
import Redis

extension CountdownSystem {
    /// Waits until the relay has taken every outbox row and the queue holds nothing due or claimed (jobs
    /// scheduled for later may wait).
    public func waitForIdle(timeout: Duration = .seconds(120), _ what: String) async throws {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        try await waitUntil(timeout: timeout, every: .milliseconds(100), what) { [self] in
            let outbox = try await outboxBacklog()
            let stats = try await queue.stats()
            return outbox == 0 && stats.dueNow == 0 && stats.leased == 0
        }
    }

    /// The queue's counts now (its own connection; the system's namespace).
    public func queueStats() async throws -> QueueStats {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        return try await queue.stats()
    }

    /// The ids of the jobs of `kind` the queue holds (waiting, due or claimed).
    public func queuedJobs(kind: String) async throws -> [String] {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        return try await queue.jobIDs(prefix: "", kind: kind)
    }
}

extension QueueStats {
    /// Due jobs a worker may claim now: those of paused kinds are held aside, not open work.
    public var claimableNow: Int { dueNow - paused }
}
