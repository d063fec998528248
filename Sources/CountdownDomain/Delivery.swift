import Foundation

/// A push's fate, as the flows need it (SPEC section 6, "Push errors").
public enum Delivery: Sendable, Equatable {
    /// The push service took it; `name` is its message id.
    case accepted(name: String?)
    /// The service refused one token of the push (and the token guard let it through): clear that token (or
    /// delete the session, for a runtime token); never retry as is.
    case tokenRefused(TargetToken, reason: String)
    /// Refused for good for a reason other than a token.
    case rejected(reason: String)
    /// Try again later, after `after` when the service said so.
    case retry(after: Duration?, reason: String)
    /// Credentials or project are wrong: alert, do not spin.
    case configurationError(reason: String)

    /// Metric label of the result.
    public var result: String {
        switch self {
        case .accepted: "accepted"
        case .tokenRefused: "dead_token"
        case .rejected: "rejected"
        case .retry: "retry"
        case .configurationError: "config_error"
        }
    }

    /// Metric label of the reason (empty when accepted).
    public var reason: String {
        switch self {
        case .accepted: ""
        case .tokenRefused(_, let reason), .rejected(let reason), .retry(_, let reason), .configurationError(let reason): reason
        }
    }
}
