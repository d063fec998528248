import BlockingIO
import Lifecycle

/// Fires the deadlines of the requests in flight from one loop that wakes every `tick`, instead of a timer and a
/// task per request (a `Task.sleep` per request cost the API a dispatch timer to arm and cancel on every call).
/// A deadline fires at most one tick late, and only while the service runs (in the API process's group).
final class RequestDeadlines: PeriodicService {
    let name = "request-deadlines"

    private struct Entry {
        let due: ContinuousClock.Instant
        let fire: @Sendable () -> Void
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private let state = Locked(State())
    private let clock = ContinuousClock()
    private let tick: Duration

    init(tick: Duration = .milliseconds(50)) { self.tick = tick }

    /// Calls `fire` once `after` has passed, unless `remove` is called first with the returned id.
    func add(after: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let due = clock.now + after
        return state.withLock { state -> UInt64 in
            state.next += 1
            state.entries[state.next] = Entry(due: due, fire: fire)
            return state.next
        }
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Fires and forgets every entry due by `now`.
    func fireExpired(now: ContinuousClock.Instant) {
        let expired = state.withLock { state -> [Entry] in
            let due = state.entries.filter { $0.value.due <= now }
            for id in due.keys { state.entries[id] = nil }
            return Array(due.values)
        }
        for entry in expired { entry.fire() }
    }

    func runOnce() async -> Duration? {
        fireExpired(now: clock.now)
        return tick
    }
}
