/// Proof of one claim of one job; only the current lease can ack, retry, fail or extend the job.
public struct JobLease: Sendable, Hashable {
    public let id: String
    public let token: String
    /// Which attempt this claim is (1 for the first run).
    public let attempt: Int

    public init(id: String, token: String, attempt: Int) {
        self.id = id
        self.token = token
        self.attempt = attempt
    }
}
