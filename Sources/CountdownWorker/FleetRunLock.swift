import Redis

/// One worker of the fleet runs a periodic job per interval: whoever sets `key` first (`SET NX PX`) runs, the others
/// skip; the lock expires on its own, so a crashed holder never blocks the next interval (no leader election).
struct FleetRunLock: Sendable {
    let redis: RedisClient
    let key: String
    let token: String

    /// True when this worker took the lock for `milliseconds`.
    func acquire(forMilliseconds milliseconds: Int) async throws -> Bool {
        let reply = try await redis.command(["SET", RedisArgument(key), RedisArgument(token), "NX", "PX", RedisArgument(milliseconds)])
        return reply.string == "OK"
    }

    /// Extends the lock to `milliseconds` from now while this worker still holds it; false when it does not.
    @discardableResult
    func extend(forMilliseconds milliseconds: Int) async throws -> Bool {
        try await redis.run(script: Self.extendScript, keys: [RedisArgument(key)], args: [RedisArgument(token), RedisArgument(milliseconds)]).integer == 1
    }

    static let extendScript = RedisScript(name: "fleet.runlock.extend.v1", source: """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
        return 0
        """)

    /// Held for a little less than one interval, so the next interval's run anywhere can take it again.
    static func milliseconds(forInterval interval: Duration) -> Int {
        max(1000, Int(interval.components.seconds) * 1000 - 1000)
    }
}
