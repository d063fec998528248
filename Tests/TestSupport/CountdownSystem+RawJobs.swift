import Redis

extension CountdownSystem {
    /// A key of this system's queue, `{namespace}:q1:<name>` (`due`, `data`, `leased`, ...: the layout of
    /// DelayQueue's QueueKeys), for writing into the queue directly.
    public func queueKey(_ name: String) -> RedisArgument { RedisArgument("{\(namespace)}:q1:\(name)") }

    /// Writes a job straight into the queue, due now by the Redis server's clock, bypassing `enqueue`: `data` is
    /// stored as it is (a well-formed job is its kind, a NUL and its JSON payload), so a scenario can plant jobs no
    /// worker can read.
    public func injectRawJob(_ id: String, data: [UInt8]) async throws {
        let time = try await redis.command(["TIME"]).throwIfError(context: "TIME")
        guard let parts = time.array, parts.count == 2, let seconds = parts[0].string.flatMap({ Int($0) }),
              let micros = parts[1].string.flatMap({ Int($0) }) else { throw HarnessError("Redis TIME answered \(time)") }
        _ = try await redis.command(["HSET", queueKey("data"), RedisArgument(id), RedisArgument(bytes: data)]).throwIfError(context: "HSET")
        _ = try await redis.command(["ZADD", queueKey("due"), RedisArgument(seconds * 1000 + micros / 1000), RedisArgument(id)])
            .throwIfError(context: "ZADD")
    }
}
