import BlockingIO
import Foundation
import Redis

/// The wall clock corrected to the Redis server's `TIME`. Credentials this worker signs (the FCM OAuth assertion's
/// `iat`/`exp`, the APNs provider token's `iat`) are judged against the real time by Google and Apple, so a host
/// whose clock runs minutes off would otherwise be refused; due decisions already use Redis and PostgreSQL time.
public final class ServerClock: Sendable {
    private let offset = Locked<TimeInterval>(0)
    private let local: @Sendable () -> Date

    /// - Parameter local: the host's wall clock; tests inject their own.
    public init(local: @escaping @Sendable () -> Date = { Date() }) {
        self.local = local
    }

    /// Seconds to add to the host clock to get the server's (positive when the host runs slow).
    public var offsetSeconds: TimeInterval { offset.value }

    /// The corrected time.
    @Sendable public func now() -> Date { local().addingTimeInterval(offset.value) }

    /// Records one measurement: the server said `server` while the host clock went from `sent` to `received`.
    /// The server's answer is taken to belong to the middle of the round trip.
    public func record(server: Date, sent: Date, received: Date) {
        let middle = sent.addingTimeInterval(received.timeIntervalSince(sent) / 2)
        offset.withLock { $0 = server.timeIntervalSince(middle) }
    }

    /// Measures the offset against Redis `TIME`.
    public func sync(with redis: RedisClient) async throws {
        let sent = local()
        let reply = try await redis.command(["TIME"])
        let received = local()
        record(server: try reply.serverTime(), sent: sent, received: received)
    }
}
