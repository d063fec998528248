import BlockingIO

/// A wake-up for one waiting loop that is never lost: a `ring()` while nobody waits makes the next `wait` return at
/// once. It suits a loop that checks its work, then waits: work that arrives in between rings the bell and the wait
/// returns (the dispatcher waiting for a free slot, the settler waiting for outcomes).
public final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
        var nextID = 0
    }
    private let state = Locked(State())

    public init() {}

    /// Wakes the waiter, or the next one to wait.
    public func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    /// Returns once the bell rang (since the last wait returned), `timeout` passed (nil: no limit) or the task is
    /// cancelled. One waiter at a time.
    public func wait(timeout: Duration? = nil) async {
        await withTimeout(timeout) { await self.waitForRing() }
    }

    private func waitForRing() async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    if Task.isCancelled { return true }  // a ring stays for the next wait
                    state.waiter = (id, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume()
        }
    }
}
