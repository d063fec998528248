/// The one exponential backoff: `first` after the first failure, doubling with each further one, never more than
/// `limit`. Every retry loop and retry schedule takes its waits from one of these (the queue's `RetryPolicy` adds
/// its jitter on top).
public struct Backoff: Sendable, Hashable {
    /// The wait after the first failure.
    public var first: Duration
    /// The longest wait.
    public var limit: Duration

    public init(first: Duration, limit: Duration) {
        self.first = first
        self.limit = limit
    }

    /// The wait after `failures` failures in a row: zero for none, `first` for one, then doubling up to `limit`.
    public func delay(afterFailure failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        var delay = min(first, limit)
        var doublings = failures - 1
        while doublings > 0 && delay > .zero && delay < limit {
            delay = min(delay * 2, limit)
            doublings -= 1
        }
        return delay
    }
}
