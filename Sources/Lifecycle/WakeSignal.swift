import BlockingIO

/// A resettable wake-up: `notify()` wakes everyone waiting now; `wait(timeout:)` returns on a notify or timeout.
/// Wake-ups may be spurious (a timed-out waiter releases the others); callers re-check their condition.
public final class WakeSignal: Sendable {
    private let waiters = Locked([CheckedContinuation<Void, Never>]())

    public init() {}

    public func notify() {
        let current = waiters.withLock { list -> [CheckedContinuation<Void, Never>] in
            defer { list.removeAll() }
            return list
        }
        for waiter in current { waiter.resume() }
    }

    public func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { continuation in waiters.withLock { $0.append(continuation) } }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
            notify()  // release our own waiter if the timeout won
        }
    }
}
