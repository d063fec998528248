import BlockingIO

/// A one-way latch the process trips on SIGTERM/SIGINT; services poll it or await it.
public final class ShutdownSignal: Sendable {
    private struct State {
        var triggered = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    public init() {}

    public var isTriggered: Bool { state.withLock { $0.triggered } }

    /// Trips the latch and wakes every waiter. Later calls do nothing.
    public func trigger() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.triggered else { return [] }
            state.triggered = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the latch is tripped.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.triggered { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Sleeps for `duration` or until the latch trips, whichever comes first. Returns `true` if tripped.
    @discardableResult
    public func sleep(for duration: Duration) async -> Bool {
        if isTriggered { return true }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask { await self.wait() }
            await group.next()
            group.cancelAll()
        }
        return isTriggered
    }
}
