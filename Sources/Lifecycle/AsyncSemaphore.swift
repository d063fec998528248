import BlockingIO

/// Bounds how many tasks do something at once (pushes in flight); waiters are served in order.
public final class AsyncSemaphore: Sendable {
    private struct Waiter {
        var permits: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
    }

    /// The most permits one `acquire` may ask for.
    public let capacity: Int
    private let state: Locked<State>

    public init(_ permits: Int) {
        precondition(permits > 0, "a semaphore needs at least one permit")
        capacity = permits
        state = Locked(State(available: permits))
    }

    /// Waits for `permits` (at most `capacity`); a caller never overtakes one that waits before it.
    public func acquire(_ permits: Int = 1) async {
        precondition(permits > 0 && permits <= capacity, "permits must be within the semaphore's capacity")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.waiters.isEmpty && state.available >= permits {
                    state.available -= permits
                    return true
                }
                state.waiters.append(Waiter(permits: permits, continuation: continuation))
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Permits free now.
    public var available: Int { state.withLock { $0.available } }

    /// Callers waiting for permits.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    public func release(_ permits: Int = 1) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.available += permits
            var ready: [CheckedContinuation<Void, Never>] = []
            while let first = state.waiters.first, first.permits <= state.available {
                state.available -= first.permits
                ready.append(state.waiters.removeFirst().continuation)
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
