/// An APNs error answer: the status and Apple's `reason`, with `Retry-After` seconds and the 410 `timestamp`
/// (milliseconds since the epoch; nil: now) when set.
struct APNsRefusal: Error, Sendable, Equatable {
    let status: Int
    let reason: String
    var retryAfter: Int?
    var timestamp: Int64?
}
