/// Sends through `base` at the pace `limiter` allows, and tells the limiter when the service answers 429.
public struct RateLimitedTransport: PushTransport {
    private let base: any PushTransport
    private let limiter: any RateLimiter

    public init(_ base: any PushTransport, limiter: any RateLimiter) {
        self.base = base
        self.limiter = limiter
    }

    /// Reserves the whole batch's permits at once, then sends it.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        if messages.isEmpty { return [] }
        do {
            try await limiter.acquire(messages.count)
        } catch {
            return Array(repeating: .retryable(after: nil, reason: "rate limiter: \(error)"), count: messages.count)
        }
        let results = await base.sendAll(messages, onAnswer: onAnswer)
        if results.contains(where: \.isThrottled) { await limiter.reportThrottled() }
        return results
    }
}
