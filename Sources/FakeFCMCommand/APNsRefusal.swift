/// An APNs error answer: the status and Apple's `reason`, with `Retry-After` seconds and the 410 `timestamp`
/// (milliseconds since the epoch; nil: now) when set.
struct APNsRefusal: Error, Sendable, Equatable {
    let status: Int
    let reason: String
    var retryAfter: Int?
    var timestamp: Int64?

    init(status: Int, reason: String, retryAfter: Int? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
        self.timestamp = timestamp
    }
}
