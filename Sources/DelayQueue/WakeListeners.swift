import BlockingIO
import Redis

/// Subscribers to the queue's wake channel, one per concurrent waiter, kept subscribed between waits so a wake
/// published while the worker was busy is still seen (the next wait returns at once).
final class WakeListeners: Sendable {
    private let configuration: RedisConfiguration
    private let channel: RedisArgument
    private let state = Locked<(idle: [RedisSubscriber], busy: [ObjectIdentifier: RedisSubscriber], closed: Bool)>(([], [:], false))

    init(configuration: RedisConfiguration, channel: RedisArgument) {
        self.configuration = configuration
        self.channel = channel
    }

    /// Returns when a wake is published, `timeout` passes, or the listeners are closed.
    func wait(timeout: Duration) async throws {
        guard timeout > .zero else { return }
        let (closed, idle) = state.withLock { state in (state.closed, state.closed ? nil : state.idle.popLast()) }
        if closed { return }
        let subscriber = try idle ?? RedisSubscriber(configuration: configuration, channels: [channel], name: "queue-wake")
        let listening = state.withLock { state in
            if !state.closed { state.busy[ObjectIdentifier(subscriber)] = subscriber }
            return !state.closed
        }
        guard listening else { return }
        defer {
            state.withLock { state in
                state.busy[ObjectIdentifier(subscriber)] = nil
                if !state.closed { state.idle.append(subscriber) }
            }
        }
        _ = try await subscriber.next(timeout: timeout)
    }

    /// Ends every wait now and stops listening.
    func close() {
        let all = state.withLock { state -> [RedisSubscriber] in
            state.closed = true
            let all = state.idle + Array(state.busy.values)
            state.idle.removeAll()
            return all
        }
        for subscriber in all { subscriber.interrupt() }
    }
}
