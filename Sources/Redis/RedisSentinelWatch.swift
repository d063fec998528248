import BlockingIO
import Foundation

/// Listens to the Sentinels' `+switch-master` announcements for one master, on a thread of its own, and counts
/// failovers. Connections note the count when they open and reconnect (asking the Sentinels again) when it moved;
/// subscribers are woken through their pipes.
///
/// One per Sentinel set and master name for the life of the process (`shared(for:tls:)`).
final class RedisSentinelWatch: Sendable {
    private struct Key: Hashable {
        let endpoints: [String]
        let master: String
    }

    private static let registry = Locked([Key: RedisSentinelWatch]())

    private let sentinel: RedisSentinel
    private let tls: RedisTLS?
    private let state = Locked((failovers: 0, listeners: [ObjectIdentifier: WakePipe]()))

    /// The watch for `sentinel`, started at the first call.
    static func shared(for sentinel: RedisSentinel, tls: RedisTLS?) -> RedisSentinelWatch {
        let key = Key(endpoints: sentinel.sentinels.map { "\($0.host):\($0.port)" }, master: sentinel.masterName)
        let (watch, isNew) = registry.withLock { watches in
            if let existing = watches[key] { return (existing, false) }
            let made = RedisSentinelWatch(sentinel: sentinel, tls: tls)
            watches[key] = made
            return (made, true)
        }
        if isNew { Thread.detachNewThread { watch.run() } }
        return watch
    }

    private init(sentinel: RedisSentinel, tls: RedisTLS?) {
        self.sentinel = sentinel
        self.tls = tls
    }

    /// Failovers announced since the process started.
    var failovers: Int { state.value.failovers }

    /// Signals `pipe` at every failover until `removeListener`.
    func addListener(_ pipe: WakePipe) { state.withLock { $0.listeners[ObjectIdentifier(pipe)] = pipe } }

    func removeListener(_ pipe: WakePipe) { _ = state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(pipe)) } }

    private func run() {
        var next = 0
        var subscribedBefore = false
        while true {
            let endpoint = sentinel.sentinels[next % sentinel.sentinels.count]
            next += 1
            do {
                try listen(to: endpoint, subscribedBefore: &subscribedBefore)
            } catch {
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    /// Subscribes to `+switch-master` on one Sentinel and counts the announcements for this master until it fails.
    private func listen(to endpoint: RedisSentinel.Endpoint, subscribedBefore: inout Bool) throws {
        let timeout = Duration.seconds(5)
        let transport = try RedisTransport(
            host: endpoint.host, port: endpoint.port, tls: tls, deadline: ContinuousClock.now.advanced(by: timeout))
        var commands: [[RedisArgument]] = []
        if let password = sentinel.password { commands.append(["AUTH", RedisArgument(password)]) }
        commands.append(["SUBSCRIBE", "+switch-master"])
        let replies = try transport.exchange(
            commands, deadline: ContinuousClock.now.advanced(by: timeout), message: "no answer", context: "SUBSCRIBE +switch-master")
        for reply in replies { try reply.throwIfError(context: "SUBSCRIBE +switch-master") }
        // A failover may have happened while this watch was not subscribed.
        if subscribedBefore { announceFailover() }
        subscribedBefore = true
        while true {
            guard case .reply(let reply) = try transport.nextReply(deadline: ContinuousClock.now.advanced(by: .seconds(3600))),
                  let parts = reply.array, parts.count == 3, parts[0].string == "message",
                  let payload = parts[2].string, payload.hasPrefix(sentinel.masterName + " ") else { continue }
            announceFailover()
        }
    }

    private func announceFailover() {
        let listeners = state.withLock { state in
            state.failovers += 1
            return Array(state.listeners.values)
        }
        for pipe in listeners { pipe.signal() }
    }
}
