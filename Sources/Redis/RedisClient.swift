import BlockingIO

/// Whether a call may be sent a second time after its connection broke.
public enum RedisRetry: Sendable {
    /// Never resend (the first attempt may have run on the server).
    case never
    /// Resend once on a fresh connection after an I/O error or timeout; only for idempotent calls.
    case onceOnBrokenConnection
}

/// A bounded pool of Redis connections, safe to share across tasks.
///
/// Each connection lives on its own thread; calls never block the cooperative pool. A connection that broke is
/// dropped and the next use of its slot reconnects, so the client outlives server restarts.
public final class RedisClient: Sendable {
    public let configuration: RedisConfiguration
    private let pool: ResourcePool<RedisConnection>
    private let scripts = RedisScriptCache()

    /// - Parameter poolSize: the most connections (and threads) this client ever opens.
    public init(configuration: RedisConfiguration, poolSize: Int = 4, name: String = "redis") {
        self.configuration = configuration
        pool = ResourcePool(
            name: name, maxSize: poolSize,
            factory: { try RedisConnection(configuration: configuration) },
            isHealthy: { $0.isHealthy })
    }

    /// Parses `url` (see `RedisConfiguration(url:)`) and makes a client; connects lazily.
    public convenience init(url: String, poolSize: Int = 4) throws {
        self.init(configuration: try RedisConfiguration(url: url), poolSize: poolSize)
    }

    /// With Sentinel: how many failovers (`+switch-master` for this master) this process has heard of since its
    /// first connection, for whoever must act on one (the reconciler). Always 0 without Sentinel.
    public var failoversSeen: Int {
        guard let sentinel = configuration.sentinel else { return 0 }
        return RedisSentinelWatch.shared(for: sentinel, tls: configuration.tls).failovers
    }

    /// Runs `body` with a pooled connection on that connection's own thread (blocking calls are fine inside).
    public func withConnection<T: Sendable>(
        retry: RedisRetry = .never, _ body: @escaping @Sendable (RedisConnection) throws -> T
    ) async throws -> T {
        do {
            return try await pool.withResource(body)
        } catch let error as RedisError where error.breaksConnection && retry == .onceOnBrokenConnection {
            return try await pool.withResource(body)
        } catch is PoolClosedError {
            throw RedisError(.closed, "client is closed", context: configuration.redactedDescription)
        }
    }

    /// Sends one command; server error replies are thrown as `RedisError`.
    @discardableResult
    public func command(_ arguments: [RedisArgument], retry: RedisRetry = .never) async throws -> RedisReply {
        try await withConnection(retry: retry) { try $0.command(arguments) }
    }

    /// Sends one command; server error replies are thrown as `RedisError`.
    @discardableResult
    public func command(_ arguments: RedisArgument..., retry: RedisRetry = .never) async throws -> RedisReply {
        try await command(arguments, retry: retry)
    }

    /// Sends many commands in one round trip; server error replies stay in place as `.error`.
    public func pipeline(_ commands: [[RedisArgument]], retry: RedisRetry = .never) async throws -> [RedisReply] {
        try await withConnection(retry: retry) { try $0.pipeline(commands) }
    }

    /// Runs a Lua script by `EVALSHA` (loaded once per client; reloaded after `NOSCRIPT`); a server error reply is
    /// thrown as `RedisError`.
    @discardableResult
    public func run(
        script: RedisScript, keys: [RedisArgument] = [], args: [RedisArgument] = [], retry: RedisRetry = .never
    ) async throws -> RedisReply {
        let scripts = self.scripts
        return try await withConnection(retry: retry) {
            try $0.runPipelined(script, calls: [(keys, args)], cache: scripts)[0].throwIfError(context: script.name)
        }
    }

    /// Runs a Lua script once per call, all calls in one pipeline; server error replies stay in place as `.error`.
    public func runPipelined(
        script: RedisScript, calls: [(keys: [RedisArgument], args: [RedisArgument])], retry: RedisRetry = .never
    ) async throws -> [RedisReply] {
        let scripts = self.scripts
        let prepared = calls.map { (keys: $0.keys, arguments: $0.args) }
        return try await withConnection(retry: retry) { try $0.runPipelined(script, calls: prepared, cache: scripts) }
    }

    /// Frees idle connections; later calls throw `.closed`.
    public func close() { pool.close() }
}
