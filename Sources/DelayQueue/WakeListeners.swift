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
        let taken: RedisSubscriber? = state.withLock { state in
            if state.closed { return nil }
            if let subscriber = state.idle.popLast() {
                state.busy[ObjectIdentifier(subscriber)] = subscriber
                return subscriber
            }
            return nil
        }
        let subscriber: RedisSubscriber
        if let taken {
            subscriber = taken
        } else {
            if state.withLock({ $0.closed }) { return }
            subscriber = try RedisSubscriber(configuration: configuration, channels: [channel], name: "queue-wake")
            state.withLock { $0.busy[ObjectIdentifier(subscriber)] = subscriber }
        }
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
