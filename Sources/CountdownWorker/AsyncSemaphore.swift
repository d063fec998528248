import BlockingIO

/// Bounds how many tasks do something at once (pushes in flight); waiters are served in order.
final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Locked<State>

    init(_ permits: Int) {
        precondition(permits > 0, "a semaphore needs at least one permit")
        state = Locked(State(available: permits))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    func withPermit<T: Sendable>(_ body: () async -> T) async -> T {
        await acquire()
        defer { release() }
        return await body()
    }
}
