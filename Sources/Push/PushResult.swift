/// How a push ended, classified so the caller knows what to do (SPEC 6, "Push errors").
public enum PushResult: Sendable, Equatable {
    /// Delivered to FCM / APNs. `messageName` is FCM's `name` or APNs' `apns-id`, when given.
    case accepted(messageName: String?)
    /// The token is dead (FCM `UNREGISTERED`, APNs 410 / `BadDeviceToken`): clear it, never retry.
    case deadToken(reason: String)
    /// Refused for good; record `reason`. When `tokenLevel`, the token itself is the cause: clear it.
    case rejected(reason: String, tokenLevel: Bool)
    /// Try again later: after `after` when the server said so (`Retry-After`), else with backoff and jitter.
    case retryable(after: Duration?, reason: String)
    /// Credentials or project setup are wrong (e.g. `THIRD_PARTY_AUTH_ERROR`, 401 after a refresh): alert, do not spin.
    case configurationError(reason: String)

    /// Reasons that mean "you are sending too fast": the global rate should slow down.
    public static let throttlingReasons: Set<String> = ["QUOTA_EXCEEDED", "TooManyRequests", "TooManyProviderTokenUpdates"]

    /// Whether the server asked us to slow down (a 429).
    public var isThrottled: Bool {
        if case .retryable(_, let reason) = self { return Self.throttlingReasons.contains(reason) }
        return false
    }

    /// A short label for metrics: `accepted`, `dead_token`, `rejected`, `retryable`, `configuration_error`.
    public var label: String {
        switch self {
        case .accepted: "accepted"
        case .deadToken: "dead_token"
        case .rejected: "rejected"
        case .retryable: "retryable"
        case .configurationError: "configuration_error"
        }
    }
}
