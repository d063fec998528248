import Redis

/// The token guard's window in Redis, shared by every worker: a hash of per-second buckets (`s<second>` sends,
/// `r<second>` refusals) stamped with Redis `TIME`; one script adds to the current second, drops the seconds
/// that left the window and sums the rest.
public final class RedisTokenGuardWindow: TokenGuardWindow {
    static let script = RedisScript(name: "push.tokenguard.v1", source: """
        local now = tonumber(redis.call('TIME')[1])
        local window = tonumber(ARGV[3])
        if tonumber(ARGV[1]) > 0 then redis.call('HINCRBY', KEYS[1], 's' .. now, ARGV[1]) end
        if tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[1], 'r' .. now, ARGV[2]) end
        local all = redis.call('HGETALL', KEYS[1])
        local sends, refusals, stale = 0, 0, {}
        for i = 1, #all, 2 do
          local field = all[i]
          local second = tonumber(string.sub(field, 2))
          if not second or second <= now - window then
            stale[#stale + 1] = field
          elseif string.sub(field, 1, 1) == 's' then
            sends = sends + tonumber(all[i + 1])
          else
            refusals = refusals + tonumber(all[i + 1])
          end
        end
        if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
        redis.call('EXPIRE', KEYS[1], window * 2)
        return {sends, refusals}
        """)

    private let redis: RedisClient
    private let key: RedisArgument
    private let windowSeconds: Int

    /// - Parameter namespace: `COUNTDOWN_NAMESPACE`; the key is `{namespace}:push:tokenguard`.
    public init(redis: RedisClient, namespace: String, window: Duration = .seconds(60)) {
        self.redis = redis
        key = RedisArgument(RedisKeys(namespace: namespace).pushTokenGuard)
        windowSeconds = max(1, Int(window.components.seconds))
    }

    public func record(sends: Int, refusals: Int) async throws -> TokenGuard.Counts {
        let reply = try await redis.run(
            script: Self.script, keys: [key],
            args: [RedisArgument(max(0, sends)), RedisArgument(max(0, refusals)), RedisArgument(windowSeconds)])
        guard let values = reply.array?.compactMap(\.integer), values.count == 2 else {
            throw RedisError(.unexpectedReply, "token guard script answered \(reply)", context: Self.script.name)
        }
        return TokenGuard.Counts(sends: Int(values[0]), refusals: Int(values[1]))
    }
}
