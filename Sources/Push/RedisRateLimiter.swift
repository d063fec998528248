import BlockingIO
import Redis

/// The global push rate limit shared by every worker: a generic cell rate algorithm kept in Redis, so all
/// processes draw from one `PUSH_RATE_LIMIT_PER_MINUTE` budget. Permits are reserved atomically by a Lua script
/// using the server's clock (`TIME`), never a worker's; after a 429 the interval is multiplied by
/// `slowdownFactor` for everyone for `slowdownPeriod`.
public final class RedisRateLimiter: RateLimiter {
    static let script = RedisScript(name: "push.ratelimit.v1", source: """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
        local interval = tonumber(ARGV[1])
        if redis.call('EXISTS', KEYS[2]) == 1 then interval = interval * tonumber(ARGV[4]) end
        local burst = tonumber(ARGV[2])
        local permits = tonumber(ARGV[3])
        local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
        if tat < now then tat = now end
        local reserved = tat + interval * permits
        local wait = reserved - interval * burst - now
        if wait < 0 then wait = 0 end
        redis.call('SET', KEYS[1], string.format('%.0f', reserved), 'PX', math.floor((reserved - now) / 1000) + 1000)
        return math.floor(wait)
        """)

    private let redis: RedisClient
    private let rateKey: RedisArgument
    private let slowKey: RedisArgument
    private let intervalMicroseconds: Int
    private let burst: Int
    private let slowdownFactor: Int
    private let slowdownMilliseconds: Int
    private let sleep: @Sendable (Duration) async throws -> Void

    /// - Parameters:
    ///   - namespace: the Redis key namespace (`COUNTDOWN_NAMESPACE`); keys are `{namespace}:push:rate` and
    ///     `{namespace}:push:rate:slow`, one hash slot.
    ///   - perMinute: the budget of all workers together.
    ///   - burst: permits available at once after a quiet period; one second's worth by default.
    ///   - sleep: waits the time Redis says to (tests may shorten or record it).
    public init(
        redis: RedisClient, namespace: String, perMinute: Int, burst: Int? = nil, slowdownFactor: Int = 2,
        slowdownPeriod: Duration = .seconds(60), sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        precondition(perMinute > 0, "the rate must be positive")
        self.redis = redis
        rateKey = RedisArgument(RedisKeys(namespace: namespace).pushRate)
        slowKey = RedisArgument(RedisKeys(namespace: namespace).pushRateSlow)
        intervalMicroseconds = max(1, 60_000_000 / perMinute)
        self.burst = max(1, burst ?? perMinute / 60)
        self.slowdownFactor = max(1, slowdownFactor)
        slowdownMilliseconds = max(1, Int(slowdownPeriod.wholeMilliseconds))
        self.sleep = sleep
    }

    /// Reserves `permits` in the shared budget and waits until they are due.
    /// - Throws: `RedisError` when Redis cannot be reached, `CancellationError` when cancelled while waiting.
    public func acquire(_ permits: Int) async throws {
        let reply = try await redis.run(
            script: Self.script, keys: [rateKey, slowKey],
            args: [RedisArgument(intervalMicroseconds), RedisArgument(burst), RedisArgument(permits), RedisArgument(slowdownFactor)])
        guard let wait = reply.integer else {
            throw RedisError(.unexpectedReply, "rate limit script answered \(reply)", context: Self.script.name)
        }
        if wait > 0 { try await sleep(.microseconds(wait)) }
    }

    /// Slows every worker down for the slowdown period (a failure to tell Redis is ignored: the next 429 retries it).
    public func reportThrottled() async {
        _ = try? await redis.command("SET", slowKey, "1", "PX", RedisArgument(slowdownMilliseconds))
    }

    /// Whether the shared rate is currently reduced.
    public func isSlowed() async throws -> Bool {
        try await redis.command("EXISTS", slowKey).integer == 1
    }
}
