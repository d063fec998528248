/// How the push services keep and replace a plain notification (SPEC 10.2). Every field is optional: an unset
/// one is left out of the request.
public struct NotificationOptions: Sendable, Equatable {
    /// `apns-expiration`: epoch seconds after which APNs drops the notification undelivered.
    public var apnsExpiration: Int?
    /// `apns-collapse-id` and `android.collapse_key`.
    public var collapseID: String?
    /// `android.ttl`, in seconds (sent as `"<n>s"`).
    public var androidTTLSeconds: Int?
    /// `android.notification.channel_id`.
    public var androidChannelID: String?
    /// `android.notification.tag`: replaces a shown notification with the same tag.
    public var androidTag: String?

    public init(apnsExpiration: Int? = nil, collapseID: String? = nil, androidTTLSeconds: Int? = nil, androidChannelID: String? = nil,
                androidTag: String? = nil) {
        self.apnsExpiration = apnsExpiration
        self.collapseID = collapseID
        self.androidTTLSeconds = androidTTLSeconds
        self.androidChannelID = androidChannelID
        self.androidTag = androidTag
    }

    /// The APNs headers these options set (string values, as FCM requires).
    public var apnsHeaders: [String: String] {
        var headers: [String: String] = [:]
        if let apnsExpiration { headers["apns-expiration"] = String(apnsExpiration) }
        if let collapseID { headers["apns-collapse-id"] = collapseID }
        return headers
    }
}
