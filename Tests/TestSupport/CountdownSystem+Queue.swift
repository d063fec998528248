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

    /// Due, waiting, leased and dead jobs in one round trip, by the Redis server's clock.
    public func queueCounts() async throws -> QueueCounts {
        let key = { (name: String) in RedisArgument("{\(self.namespace)}:q1:\(name)") }
        let reply = try await redis.command(["EVAL", RedisArgument(Self.queueCountsScript), "3", key("due"), key("leased"), key("dead")])
        let counts = try reply.throwIfError(context: "queue counts").array?.compactMap { $0.integer.map(Int.init) } ?? []
        guard counts.count == 4 else { throw HarnessError("queue counts: unexpected reply \(reply)") }
        return QueueCounts(dueNow: counts[0], waiting: counts[1] - counts[0], leased: counts[2], dead: counts[3])
    }

    /// The ids of the jobs of `kind` the queue holds (waiting, due or claimed).
    public func queuedJobs(kind: String) async throws -> [String] {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        return try await queue.jobIDs(prefix: "", kind: kind)
    }

    /// (due now, waiting in all, leased, dead) at one moment of the server's clock (queue layout `q1`).
    private static let queueCountsScript = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        return {redis.call('ZCOUNT', KEYS[1], '-inf', now), redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]),
                redis.call('ZCARD', KEYS[3])}
        """
}
