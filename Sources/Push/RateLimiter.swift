/// A send-rate budget, shared by everything that pushes through it (one process, or all workers via Redis).
public protocol RateLimiter: Sendable {
    /// Waits until `permits` more sends fit the budget. Throws `CancellationError` when the task is cancelled.
    func acquire(_ permits: Int) async throws
    /// The push service answered 429: slow the rate down for a while.
    func reportThrottled() async
}
