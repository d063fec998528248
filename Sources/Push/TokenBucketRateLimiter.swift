/// An in-process rate limiter (generic cell rate algorithm, i.e. a token bucket with `burst` capacity): permits are
/// handed out in arrival order at `perMinute`, and at half that for `slowdownPeriod` after a 429.
public actor TokenBucketRateLimiter<C: Clock>: RateLimiter where C.Duration == Duration {
    private let clock: C
    private let interval: Duration
    private let burst: Int
    private let slowdownFactor: Int
    private let slowdownPeriod: Duration
    private var theoreticalArrival: C.Instant
    private var slowUntil: C.Instant?

    /// - Parameters:
    ///   - perMinute: the sustained rate (`PUSH_RATE_LIMIT_PER_MINUTE`).
    ///   - burst: permits available at once after a quiet period; one second's worth by default.
    ///   - slowdownFactor: the interval between permits is multiplied by this after a 429.
    public init(perMinute: Int, burst: Int? = nil, slowdownFactor: Int = 2, slowdownPeriod: Duration = .seconds(60), clock: C) {
        precondition(perMinute > 0, "the rate must be positive")
        self.clock = clock
        interval = .seconds(60) / perMinute
        self.burst = max(1, burst ?? perMinute / 60)
        self.slowdownFactor = max(1, slowdownFactor)
        self.slowdownPeriod = slowdownPeriod
        theoreticalArrival = clock.now
    }

    public func acquire(_ permits: Int) async throws {
        let now = clock.now
        let step = currentInterval(at: now)
        let start = max(theoreticalArrival, now)
        theoreticalArrival = start.advanced(by: step * permits)
        let allowedAt = theoreticalArrival.advanced(by: .zero - step * burst)
        if allowedAt > now { try await clock.sleep(until: allowedAt, tolerance: nil) }
    }

    public func reportThrottled() {
        slowUntil = clock.now.advanced(by: slowdownPeriod)
    }

    /// Whether the rate is currently reduced after a 429.
    public var isSlowed: Bool {
        guard let slowUntil else { return false }
        return clock.now < slowUntil
    }

    private func currentInterval(at now: C.Instant) -> Duration {
        if let slowUntil, now < slowUntil { return interval * slowdownFactor }
        return interval
    }
}

extension TokenBucketRateLimiter where C == ContinuousClock {
    public init(perMinute: Int, burst: Int? = nil, slowdownFactor: Int = 2, slowdownPeriod: Duration = .seconds(60)) {
        self.init(perMinute: perMinute, burst: burst, slowdownFactor: slowdownFactor, slowdownPeriod: slowdownPeriod, clock: ContinuousClock())
    }
}
