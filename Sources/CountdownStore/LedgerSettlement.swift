/// The outcome of one start push, written back to the ledger in one statement per fan-out.
public struct LedgerSettlement: Sendable {
    public var stream: String
    public var user: String
    public var device: String
    public var status: String
    public var reason: String?
    public var name: String?
    /// `TokenHash.of` the (FCM, push-to-start) tokens the push went to, when one was sent.
    public var tokenHash: String?

    public init(stream: String, user: String, device: String, status: String, reason: String?, name: String? = nil,
         tokenHash: String? = nil) {
        self.stream = stream
        self.user = user
        self.device = device
        self.status = status
        self.reason = reason
        self.name = name
        self.tokenHash = tokenHash
    }
}
