/// Sends through `base` at the pace `limiter` allows, and tells the limiter when the service answers 429.
public struct RateLimitedTransport: PushTransport {
    private let base: any PushTransport
    private let limiter: any RateLimiter

    public init(_ base: any PushTransport, limiter: any RateLimiter) {
        self.base = base
        self.limiter = limiter
    }

    public func send(_ message: PushMessage) async -> PushResult {
        do {
            try await limiter.acquire(1)
        } catch {
            return .retryable(after: nil, reason: "rate limiter: \(error)")
        }
        let result = await base.send(message)
        if result.isThrottled { await limiter.reportThrottled() }
        return result
    }
}
