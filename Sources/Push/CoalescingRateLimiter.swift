import BlockingIO

/// Lets many concurrent senders share one reservation at a time from `base` (the Redis limiter costs a round
/// trip per call): while a reservation is in flight, later callers gather, and the next reservation takes all
/// their permits at once (up to `maxPermits`). Every caller still waits until its permits are due; a group
/// waits for its last permit, which at the default rate and 256 permits is 25 ms.
public final class CoalescingRateLimiter: RateLimiter {
    private struct Waiter {
        let id: UInt64
        let permits: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var waiting: [Waiter] = []
        var reserving = false
        var nextID: UInt64 = 0
    }

    private let base: any RateLimiter
    private let maxPermits: Int
    private let state = Locked(State())

    public init(_ base: any RateLimiter, maxPermits: Int = 256) {
        precondition(maxPermits > 0)
        self.base = base
        self.maxPermits = maxPermits
    }

    /// Callers waiting for a reservation to start (not those in the one in flight).
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// - Throws: `CancellationError` when cancelled before its group's reservation started (a reservation in
    ///   progress is waited for), or the base limiter's error.
    public func acquire(_ permits: Int) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let start = state.withLock { state -> Bool in
                    state.waiting.append(Waiter(id: id, permits: permits, continuation: continuation))
                    guard !state.reserving else { return false }
                    state.reserving = true
                    return true
                }
                if start { Task { await self.reserve() } }
            }
        } onCancel: {
            let removed = state.withLock { state -> Waiter? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index)
            }
            removed?.continuation.resume(throwing: CancellationError())
        }
    }

    public func reportThrottled() async {
        await base.reportThrottled()
    }

    /// Reserves for the gathered callers, group after group, until nobody waits.
    private func reserve() async {
        while let group = nextGroup() {
            do {
                try await base.acquire(group.reduce(0) { $0 + $1.permits })
                for waiter in group { waiter.continuation.resume() }
            } catch {
                for waiter in group { waiter.continuation.resume(throwing: error) }
            }
        }
    }

    /// The callers in arrival order whose permits fit one reservation (always at least one); nil when none wait.
    private func nextGroup() -> [Waiter]? {
        state.withLock { state -> [Waiter]? in
            guard !state.waiting.isEmpty else {
                state.reserving = false
                return nil
            }
            var total = 0
            var count = 0
            for waiter in state.waiting {
                if count > 0 && total + waiter.permits > maxPermits { break }
                total += waiter.permits
                count += 1
            }
            let group = Array(state.waiting.prefix(count))
            state.waiting.removeFirst(count)
            return group
        }
    }
}
