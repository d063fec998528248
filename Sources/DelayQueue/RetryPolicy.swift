import BlockingIO

/// How many times a job runs and how long it waits between failed attempts.
public struct RetryPolicy: Sendable, Hashable {
    /// After this many attempts a failing job becomes a dead letter.
    public var maxAttempts: Int
    /// Backoff after the first failure; doubles with each further attempt.
    public var baseDelay: Duration
    /// Backoff never exceeds this.
    public var maxDelay: Duration
    /// Fraction of each backoff drawn at random (0: none, 1: anywhere from zero to the full delay).
    public var jitter: Double

    public init(maxAttempts: Int = 8, baseDelay: Duration = .seconds(2), maxDelay: Duration = .seconds(600), jitter: Double = 0.5) {
        precondition(maxAttempts >= 1, "at least one attempt")
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The backoff after failed attempt number `attempt` (1-based): `base × 2^(attempt−1)`, capped, of which the
    /// `jitter` fraction is scaled by `draw` (a number in `0...1`).
    public func delay(afterAttempt attempt: Int, draw: Double) -> Duration {
        let full = Backoff(first: baseDelay, limit: maxDelay).delay(afterFailure: max(attempt, 1)).timeInterval
        let seconds = full * (1 - jitter) + full * jitter * min(max(draw, 0), 1)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The backoff after failed attempt number `attempt`, with the jitter drawn from `random`.
    public func delay(afterAttempt attempt: Int, using random: inout some RandomNumberGenerator) -> Duration {
        delay(afterAttempt: attempt, draw: Double.random(in: 0...1, using: &random))
    }
}
