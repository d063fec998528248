import BlockingIO

/// Lets an event through at most once per key and interval, counting the ones held back: a fault repeated on every
/// push (a misconfigured fleet) logs one line per reason and minute, not one per batch.
final class OncePerInterval: Sendable {
    private struct Entry {
        var passed: ContinuousClock.Instant
        var held = 0
    }

    private let interval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let entries = Locked<[String: Entry]>([:])

    init(_ interval: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.interval = interval
        self.now = now
    }

    /// Counts `count` events of `key`. Returns how many were held back since the key last passed when it passes (its
    /// first time, or `interval` after it last passed), nil when these are held back too.
    func pass(_ key: String, count: Int = 1) -> Int? {
        let now = now()
        return entries.withLock { entries -> Int? in
            if let entry = entries[key], now - entry.passed < interval {
                entries[key]?.held += count
                return nil
            }
            let held = entries[key]?.held ?? 0
            // Keys that have not come back within an interval and hold nothing back are forgotten.
            entries = entries.filter { now - $0.value.passed < interval || $0.value.held > 0 }
            entries[key] = Entry(passed: now)
            return held
        }
    }
}
