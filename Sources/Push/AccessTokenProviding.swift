/// Hands out a bearer token for a push service, refreshing it as needed; the seam transports authenticate through.
public protocol AccessTokenProviding: Sendable {
    /// A token valid now. Throws `PushError` (`.tokenRejected`, `.tokenEndpointUnavailable`, `.invalidCredentials`).
    func accessToken() async throws -> String
    /// The service refused `token`: drop it so the next `accessToken()` gets a fresh one. Tokens other than the
    /// current one are ignored, so many senders reporting the same stale token cause a single refresh.
    func invalidate(_ token: String) async
}
