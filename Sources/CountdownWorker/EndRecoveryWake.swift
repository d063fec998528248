import BlockingIO
import CountdownDomain
import CountdownFlows
import DelayQueue
import Lifecycle
import Redis
import Telemetry

/// End jobs waiting for the push service to accept again, fleet-wide (SPEC 10.1: ends go out within 5 s of its
/// recovery). An end job the service refused adds its id to a Redis sorted set (`{namespace}:ends:awaiting-recovery`),
/// scored by the earliest time it may run (now, or after a 429's `Retry-After`, by Redis `TIME`). Every half second,
/// when this worker's gateway saw a push accepted by the service ends use since the last look, the waiting ids whose
/// time has come are taken from the set and made due now (`DelayQueue.advance`: a job that is running, paused or
/// gone is left alone); ids still held by a `Retry-After` then are looked at again when it ends. A job still running
/// when its id is taken (it registers before it hands itself back with its backoff) goes back into the set and is
/// looked at again on the next look, so a recovery seen in that moment is not lost. The end job's own backoff stays
/// the fallback.
public final class EndRecoveryWake: EndRecoveryWaits, PeriodicService {
    public let name = "end-recovery-wake"
    static let register = RedisScript(name: "ends.awaitrecovery.v1", source: """
        \(RedisScript.nowMilliseconds)
        redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
        return 1
        """)
    static let take = RedisScript(name: "ends.takerecovered.v1", source: """
        \(RedisScript.nowMilliseconds)
        local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
        if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
        local later = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
        local wait = -1
        if later[2] then wait = tonumber(later[2]) - now end
        table.insert(ids, 1, tostring(wait))
        return ids
        """)

    private let redis: RedisClient
    private let key: RedisArgument
    private let queue: any DelayQueue
    private let accepted: @Sendable () -> Int
    private let metrics: WorkerMetrics
    private let logger: Logger
    let interval: Duration
    private let seen = Locked(0)
    /// When to look again without a new accepted push: the service accepted while some jobs still had to wait for
    /// a `Retry-After`.
    private let lookAgainAt = Locked<ContinuousClock.Instant?>(nil)
    private let failing = Locked(false)

    /// Ids woken per look (more wait for the next look).
    static let batch = 500

    /// - Parameter accepted: how many pushes the service that carries end pushes has accepted through this worker.
    public init(redis: RedisClient, namespace: String, queue: any DelayQueue, accepted: @escaping @Sendable () -> Int,
                metrics: WorkerMetrics, logger: Logger, interval: Duration = .milliseconds(500)) {
        self.redis = redis
        key = RedisArgument(RedisKeys(namespace: namespace).endsAwaitingRecovery)
        self.queue = queue
        self.accepted = accepted
        self.metrics = metrics
        self.logger = logger.with(["component": "end-recovery-wake"])
        self.interval = interval
    }

    public func awaitRecovery(_ job: CountdownJob, notBefore: Duration) async {
        do {
            try await redis.run(script: Self.register, keys: [key], args: [RedisArgument(job.id), RedisArgument(max(0, notBefore.wholeMilliseconds))],
                                retry: .onceOnBrokenConnection)
        } catch {
            logger.warn("an end job could not wait for the push service's recovery; its backoff applies", ["job": .string(job.id), "error": .error(error)])
        }
    }

    /// Wakes the end jobs whose time has come when a push was accepted since the last look (or at the end of the
    /// `Retry-After` of jobs that had to wait when one was); returns how many.
    @discardableResult
    func wakeOnce() async throws -> Int {
        let count = accepted()
        let now = ContinuousClock.now
        let acceptedAgain = seen.withLock { seen in defer { seen = count }; return seen != count }
        let timeToLookAgain = lookAgainAt.withLock { at in
            guard let due = at, due <= now else { return false }
            at = nil
            return true
        }
        guard acceptedAgain || timeToLookAgain else { return 0 }
        let reply = try await redis.run(script: Self.take, keys: [key], args: [RedisArgument(Self.batch)], retry: .onceOnBrokenConnection)
        try reply.throwIfError(context: Self.take.name)
        var ids = (reply.array ?? []).compactMap(\.string)
        let wait = ids.isEmpty ? -1 : Int64(ids.removeFirst()) ?? -1
        if acceptedAgain && wait >= 0 { lookAgainAt.withLock { $0 = now + .milliseconds(wait) } }
        guard !ids.isEmpty else { return 0 }
        var moved = try await queue.advance(ids)
        // `advance` leaves running jobs alone: those go back to wait for the next look. One that handed itself back
        // between the two calls is waiting with its backoff now, and is advanced here.
        let states = try await queue.jobs(ids: ids)
        var running: [String] = []
        var waiting: [String] = []
        for id in ids {
            switch states[id]?.state {
            case .leased?: running.append(id)
            case .waiting?: waiting.append(id)
            case .dead?, nil: break
            }
        }
        if !waiting.isEmpty { moved += try await queue.advance(waiting) }
        if !running.isEmpty {
            for id in running {
                try await redis.run(script: Self.register, keys: [key], args: [RedisArgument(id), "0"], retry: .onceOnBrokenConnection)
            }
            lookAgainAt.withLock { $0 = now }
        }
        metrics.endRecoveryWakes.increment(by: UInt64(max(moved, 0)))
        logger.info("the push service accepted again: end jobs waiting for it are due now", ["jobs": .int(moved), "waiting": .int(ids.count)])
        return moved
    }

    public func runOnce() async -> Duration? {
        do {
            try await wakeOnce()
            failing.withLock { $0 = false }
        } catch {
            if !failing.value { logger.warn("could not wake end jobs waiting for the push service; retrying", ["error": .error(error)]) }
            failing.withLock { $0 = true }
        }
        return interval
    }
}
