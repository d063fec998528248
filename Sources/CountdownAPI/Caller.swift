/// Who sent a request, from a verified bearer token.
public struct Caller: Sendable, Equatable {
    /// The token's `sub`: an id in `users` (not checked here).
    public let userID: String
    /// The token's `role` is `admin`.
    public let isAdmin: Bool

    public init(userID: String, isAdmin: Bool = false) {
        self.userID = userID
        self.isAdmin = isAdmin
    }
}
