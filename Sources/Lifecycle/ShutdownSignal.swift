import BlockingIO

/// A one-way latch the process trips on SIGTERM/SIGINT; services poll it or await it.
public final class ShutdownSignal: Sendable {
    private struct State {
        var triggered = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
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
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the latch is tripped (or the calling task is cancelled). Each waiter is resumed exactly once, by
    /// whichever of those removes it from the table first.
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.triggered || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Sleeps for `duration` or until the latch trips, whichever comes first. Returns `true` if tripped.
    @discardableResult
    public func sleep(for duration: Duration) async -> Bool {
        if isTriggered { return true }
        await withTimeout(duration) { await self.wait() }
        return isTriggered
    }
}
