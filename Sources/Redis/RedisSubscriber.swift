import BlockingIO

/// A pub/sub subscription on a connection and thread of its own.
///
/// `next(timeout:)` waits for a message with millisecond precision without busy polling and can be cut short
/// by `interrupt()`. After the connection broke, the subscriber reconnects, subscribes again and reports
/// `.resubscribed` (messages may have been missed meanwhile).
public final class RedisSubscriber: Sendable {
    public enum Event: Sendable, Equatable {
        case message(channel: [UInt8], payload: [UInt8])
        case timedOut
        case interrupted
        /// The connection was re-established; anything published while it was down is lost.
        case resubscribed
    }

    public let channels: [RedisArgument]
    private let configuration: RedisConfiguration
    private let connection: ConnectionThread<RedisConnection>
    private let wake: WakePipe

    public init(configuration: RedisConfiguration, channels: [RedisArgument], name: String = "redis-subscriber") throws {
        precondition(!channels.isEmpty, "subscribe to at least one channel")
        self.configuration = configuration
        self.channels = channels
        wake = try WakePipe()
        connection = ConnectionThread(name: name, open: { [wake] in try Self.subscribe(configuration, channels, wake) },
                                      isUsable: { $0.isHealthy && !$0.failoverSinceOpen })
        if let sentinel = configuration.sentinel { RedisSentinelWatch.shared(for: sentinel, tls: configuration.tls).addListener(wake) }
    }

    deinit {
        if let sentinel = configuration.sentinel { RedisSentinelWatch.shared(for: sentinel, tls: configuration.tls).removeListener(wake) }
        connection.close()
    }

    /// Connects and subscribes now (otherwise the first `next` does), so nothing published afterwards is missed.
    public func start() async throws {
        try await connection.run { _ = try $0.connected() }
    }

    /// Waits up to `timeout` for the next message.
    public func next(timeout: Duration) async throws -> Event {
        try await withTaskCancellationHandler {
            try await connection.run { [wake] slot in
                let (connection, fresh) = try slot.connected()
                if fresh { return .resubscribed }
                do {
                    while true {
                        switch try connection.awaitPushedReply(timeout: timeout, interrupt: wake) {
                        case .timedOut: return .timedOut
                        case .interrupted:
                            guard connection.failoverSinceOpen else { return .interrupted }
                            _ = try slot.connected()
                            return .resubscribed
                        case .reply(let reply):
                            if let event = Self.message(from: reply) { return event }
                        }
                    }
                } catch let error as RedisError where error.breaksConnection {
                    slot.connection = nil
                    _ = try slot.connected()
                    return .resubscribed
                }
            }
        } onCancel: {
            wake.signal()
        }
    }

    /// Makes a pending (or the next) `next(timeout:)` return `.interrupted`.
    public func interrupt() { wake.signal() }

    /// A new connection subscribed to `channels`.
    private static func subscribe(_ configuration: RedisConfiguration, _ channels: [RedisArgument], _ wake: WakePipe) throws -> RedisConnection {
        let connection = try RedisConnection(configuration: configuration)
        let reply = try connection.pipeline([["SUBSCRIBE"] + channels])
        try reply.first?.throwIfError(context: "SUBSCRIBE")
        for _ in 1..<channels.count {
            guard case .reply = try connection.awaitPushedReply(timeout: configuration.commandTimeout, interrupt: wake) else {
                throw RedisError(.timeout, "no subscribe confirmation", context: "SUBSCRIBE")
            }
        }
        return connection
    }

    private static func message(from reply: RedisReply) -> Event? {
        guard let parts = reply.array, parts.count == 3, parts[0].string == "message",
              let channel = parts[1].bytes, let payload = parts[2].bytes else { return nil }
        return .message(channel: channel, payload: payload)
    }
}
