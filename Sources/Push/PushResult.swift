/// How a push ended, classified so the caller knows what to do (SPEC 6, "Push errors").
public enum PushResult: Sendable, Equatable {
    /// Delivered to FCM / APNs. `messageName` is FCM's `name` or APNs' `apns-id`, when given.
    case accepted(messageName: String?)
    /// The service refused one token of the push (FCM `UNREGISTERED`, `SENDER_ID_MISMATCH`, a token
    /// `INVALID_ARGUMENT`; APNs 410, `BadDeviceToken`, `DeviceTokenNotForTopic`): that token, and only that one,
    /// may be cleared (the token guard decides), never retried as is.
    case tokenRefused(TokenRefusal)
    /// Refused for good for a reason that is not the token (payload, headers); record `reason`.
    case rejected(reason: String)
    /// Try again later: after `after` when the server said so (`Retry-After`), else with backoff and jitter.
    case retryable(after: Duration?, reason: String)
    /// Credentials or project setup are wrong (e.g. `THIRD_PARTY_AUTH_ERROR`, 401 after a refresh): alert, do not spin.
    case configurationError(reason: String)

    /// Reasons that mean "the project sends too fast": the global rate should slow down. APNs `TooManyRequests`
    /// concerns one device token (retried alone) and `TooManyProviderTokenUpdates` the signing key: neither
    /// slows the fleet.
    public static let throttlingReasons: Set<String> = ["QUOTA_EXCEEDED"]

    /// Whether the server asked us to slow down (a 429).
    public var isThrottled: Bool {
        if case .retryable(_, let reason) = self { return Self.throttlingReasons.contains(reason) }
        return false
    }

    /// A short label for metrics: `accepted`, `dead_token`, `rejected`, `retryable`, `configuration_error`.
    public var label: String {
        switch self {
        case .accepted: "accepted"
        case .tokenRefused: "dead_token"
        case .rejected: "rejected"
        case .retryable: "retryable"
        case .configurationError: "configuration_error"
        }
    }
}
