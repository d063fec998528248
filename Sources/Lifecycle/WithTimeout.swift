/// The one way to wait with a deadline: runs `wait` and cancels it once `timeout` has passed (nil: never); returns
/// whether `wait` returned before that. `wait` must return when cancelled, as every wait of this module does
/// (`ShutdownSignal.wait`, `Doorbell.wait`). The timer is a child task, cancelled as soon as `wait` returns: no
/// timer outlives its wait.
@discardableResult
public func withTimeout(_ timeout: Duration?, _ wait: @escaping @Sendable () async -> Void) async -> Bool {
    guard let timeout else {
        await wait()
        return true
    }
    return await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await wait()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? true
        group.cancelAll()
        return first
    }
}
