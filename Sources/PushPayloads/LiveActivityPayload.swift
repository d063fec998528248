/// A Live Activity push independent of its transport: the FCM transport splices `apsJSON` into
/// `message.apns.payload` and `apnsHeaders` into `message.apns.headers`; the APNs transport sends `apsJSON` as
/// the body with these headers plus its own (`apns-push-type`, `apns-topic`, authorization).
public struct LiveActivityPayload: Sendable, Equatable {
    /// APNs' size limit for a Live Activity payload; every built payload's `apsJSON` fits it.
    public static let maxAPSBytes = 4096

    public var event: LiveActivityEvent
    /// `apns-priority` ("10") and, on start, `apns-expiration` (epoch seconds of the planned start), as strings.
    public var apnsHeaders: [String: String]
    /// The complete APNs payload object `{"aps":{…}}`, compact JSON with sorted keys, UTF-8.
    public var apsJSON: [UInt8]

    public init(event: LiveActivityEvent, apnsHeaders: [String: String], apsJSON: [UInt8]) {
        self.event = event
        self.apnsHeaders = apnsHeaders
        self.apsJSON = apsJSON
    }
}
