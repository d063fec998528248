import BlockingIO

/// A connection of its own, on a thread of its own, for blocking commands with their own timeout.
///
/// One wait at a time; a broken connection reconnects at the next call.
public final class RedisBlockingConnection: Sendable {
    private let pool: ResourcePool<RedisConnection>
    private let configuration: RedisConfiguration

    public init(configuration: RedisConfiguration, name: String = "redis-blocking") {
        self.configuration = configuration
        pool = ResourcePool(
            name: name, maxSize: 1,
            factory: { try RedisConnection(configuration: configuration) },
            isHealthy: { $0.isHealthy })
    }

    /// Runs a blocking command whose server-side wait is at most `timeout`; the socket allows that plus the
    /// command timeout before failing with `.timeout`.
    public func command(_ arguments: [RedisArgument], timeout: Duration) async throws -> RedisReply {
        do {
            return try await pool.withResource { try $0.blockingCommand(arguments, timeout: timeout) }
        } catch is PoolClosedError {
            throw RedisError(.closed, "blocking connection is closed", context: configuration.redactedDescription)
        }
    }

    /// `BLPOP keys… timeout`: the first element pushed to any of `keys`, or `nil` when `timeout` passed.
    public func blpop(_ keys: [RedisArgument], timeout: Duration) async throws -> (key: [UInt8], value: [UInt8])? {
        try Self.popped(await command(["BLPOP"] + keys + [Self.seconds(timeout)], timeout: timeout))
    }

    /// `BRPOP keys… timeout`: like `blpop`, from the tail.
    public func brpop(_ keys: [RedisArgument], timeout: Duration) async throws -> (key: [UInt8], value: [UInt8])? {
        try Self.popped(await command(["BRPOP"] + keys + [Self.seconds(timeout)], timeout: timeout))
    }

    /// Closes the connection and stops its thread.
    public func close() { pool.close() }

    private static func seconds(_ duration: Duration) -> RedisArgument {
        let (seconds, attoseconds) = duration.components
        let milliseconds = max(seconds * 1000 + attoseconds / 1_000_000_000_000_000, 1)
        return RedisArgument(Double(milliseconds) / 1000)
    }

    private static func popped(_ reply: RedisReply) throws -> (key: [UInt8], value: [UInt8])? {
        if reply.isNull { return nil }
        guard let pair = reply.array, pair.count == 2, let key = pair[0].bytes, let value = pair[1].bytes else {
            throw RedisError(.unexpectedReply, "expected [key, value], got \(reply)", context: "BLPOP")
        }
        return (key, value)
    }
}
