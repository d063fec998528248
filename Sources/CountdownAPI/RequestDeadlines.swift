import BlockingIO

/// Fires the deadlines of the requests in flight from one loop that wakes every `tick`, instead of a timer and a
/// task per request (a `Task.sleep` per request cost the API a dispatch timer to arm and cancel on every call).
/// A deadline fires at most one tick late.
final class RequestDeadlines: Sendable {
    private struct Entry {
        let due: ContinuousClock.Instant
        let fire: @Sendable () -> Void
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        var loopRunning = false
    }

    private let state = Locked(State())
    private let clock = ContinuousClock()
    private let tick: Duration

    init(tick: Duration = .milliseconds(50)) { self.tick = tick }

    /// Calls `fire` once `after` has passed, unless `remove` is called first with the returned id.
    func add(after: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let due = clock.now + after
        let (id, startLoop) = state.withLock { state -> (UInt64, Bool) in
            state.next += 1
            state.entries[state.next] = Entry(due: due, fire: fire)
            let start = !state.loopRunning
            state.loopRunning = true
            return (state.next, start)
        }
        if startLoop { startTicking() }
        return id
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Fires and forgets every entry due by `now`; returns whether any are left.
    @discardableResult
    func fireExpired(now: ContinuousClock.Instant) -> Bool {
        let (expired, left) = state.withLock { state -> ([Entry], Bool) in
            let due = state.entries.filter { $0.value.due <= now }
            for id in due.keys { state.entries[id] = nil }
            if state.entries.isEmpty { state.loopRunning = false }
            return (Array(due.values), !state.entries.isEmpty)
        }
        for entry in expired { entry.fire() }
        return left
    }

    /// Ticks while entries are waiting; the next `add` starts it again. Holds the instance only while it works.
    private func startTicking() {
        let tick = tick
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: tick)
                guard let self, self.fireExpired(now: self.clock.now) else { return }
            }
        }
    }
}
