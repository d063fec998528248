#if canImport(Glibc)
import Glibc
#endif

/// One connection to Redis: the only owner of its transport (socket, TLS session, reply reader).
///
/// Thread-confined: use it from one thread at a time (the pool's slot thread or a dedicated `SerialThread`).
/// Every call blocks. A connection whose socket broke reconnects (AUTH, SELECT again) at its next use.
public final class RedisConnection {
    public let configuration: RedisConfiguration
    private var transport: RedisTransport?
    private var closedByOwner = false
    /// With Sentinel: the failover count when this transport was opened (a newer failover means reconnect).
    private var openedAtFailover = 0

    /// Opens the connection, authenticates and selects the database; throws a typed error quickly when it can't.
    public init(configuration: RedisConfiguration) throws {
        self.configuration = configuration
        try open()
    }

    /// Whether the socket is open and no error has been seen on it.
    public var isHealthy: Bool { transport != nil && !closedByOwner }

    /// Frees the socket; later calls throw `.closed`.
    public func close() {
        closedByOwner = true
        transport = nil
    }

    /// Sends one command and returns its reply; a server error reply is returned as `.error`, not thrown.
    public func send(_ arguments: [RedisArgument]) throws -> RedisReply {
        try exchange([arguments], what: Self.name(of: arguments))[0]
    }

    /// Sends one command; a server error reply is thrown as `RedisError` (`.server`, `.noScript`, …).
    @discardableResult
    public func command(_ arguments: [RedisArgument]) throws -> RedisReply {
        try send(arguments).throwIfError(context: Self.name(of: arguments))
    }

    /// Sends one command; a server error reply is thrown.
    @discardableResult
    public func command(_ arguments: RedisArgument...) throws -> RedisReply { try command(arguments) }

    /// Sends all commands in one write and reads all replies (one round trip). Server error replies stay in place
    /// as `.error`, so one failing command does not hide the others' results.
    public func pipeline(_ commands: [[RedisArgument]]) throws -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        return try exchange(commands, what: "pipeline of \(commands.count) (\(Self.name(of: commands[0])))")
    }

    /// Writes `commands` and reads one reply each before the command timeout. Any failure drops
    /// the transport (its state is unknown); a `READONLY` reply drops it too, so the next use finds the primary.
    private func exchange(_ commands: [[RedisArgument]], what: String) throws -> [RedisReply] {
        let transport = try usableTransport()
        let deadline = ContinuousClock.now.advanced(by: configuration.commandTimeout)
        do {
            let replies = try transport.exchange(
                commands, deadline: deadline, message: "no reply within \(configuration.commandTimeout)", context: what)
            if replies.contains(where: { if case .error(let message) = $0 { message.hasPrefix("READONLY") } else { false } }) {
                self.transport = nil
            }
            return replies
        } catch let error as RedisError {
            self.transport = nil
            throw error.code == .timeout || error.context.isEmpty
                ? error : RedisError(error.code, error.message, context: "\(what) \(error.context)", misconfigured: error.misconfigured)
        }
    }

    /// Waits up to `timeout` for a reply the server sends on its own (pub/sub messages), returning early when
    /// `interrupt` is signalled. A timeout leaves the connection usable; a broken socket throws and drops it.
    func awaitPushedReply(timeout: Duration, interrupt: WakePipe) throws -> RedisTransport.Awaited {
        guard !closedByOwner, let transport else {
            throw RedisError(.io, "connection is broken", context: "await message")
        }
        do {
            return try transport.nextReply(deadline: ContinuousClock.now.advanced(by: timeout), interrupt: interrupt)
        } catch {
            self.transport = nil
            throw error
        }
    }

    // MARK: - Connecting

    private func open() throws {
        transport = nil
        let deadline = ContinuousClock.now.advanced(by: configuration.connectTimeout)
        openedAtFailover = sentinelWatch?.failovers ?? 0
        let (host, port) = try RedisSentinelDiscovery(configuration: configuration).primary(deadline: deadline)
        transport = try RedisTransport(host: host, port: port, tls: configuration.tls, deadline: deadline)
        let target = "connect \(host):\(port)/\(configuration.database)"
        do {
            if let password = configuration.password {
                var auth: [RedisArgument] = ["AUTH"]
                if let user = configuration.username { auth.append(RedisArgument(user)) }
                auth.append(RedisArgument(password))
                if case .error(let message) = try send(auth) {
                    throw RedisError(.authenticationFailed, message, context: target)
                }
            }
            if configuration.sentinel != nil { try RedisSentinelDiscovery.requirePrimary(try command("ROLE"), at: target) }
            if configuration.database != 0 {
                try command("SELECT", RedisArgument(configuration.database))
            }
        } catch {
            transport = nil
            throw error
        }
    }

    /// The live transport, reconnecting first when the last one broke or the server closed it while idle.
    private func usableTransport() throws -> RedisTransport {
        if closedByOwner { throw RedisError(.closed, "connection is closed", context: configuration.redactedDescription) }
        if let transport, !failoverSinceOpen, transport.isOpenWhileIdle { return transport }
        try open()
        guard let transport else { throw RedisError(.closed, "connection is closed", context: configuration.redactedDescription) }
        return transport
    }

    /// Whether the Sentinels announced a failover since this connection found its primary.
    var failoverSinceOpen: Bool {
        guard let sentinelWatch else { return false }
        return sentinelWatch.failovers != openedAtFailover
    }

    private var sentinelWatch: RedisSentinelWatch? {
        configuration.sentinel.map { RedisSentinelWatch.shared(for: $0, tls: configuration.tls) }
    }

    static func name(of arguments: [RedisArgument]) -> String {
        arguments.first.map { String(decoding: $0.bytes.prefix(32), as: UTF8.self).uppercased() } ?? "(empty)"
    }
}
