import JSON

/// The delivery options of a plain notification (SPEC 10.2): it expires at the planned start on both platforms
/// and collapses with (Android: replaces, even once shown) the stream's earlier notification of the same kind.
public struct NotificationDelivery: Sendable, Equatable {
    /// `apns-expiration`: epoch seconds after which APNs drops it undelivered.
    public var expiresAt: Int
    /// `android.ttl` in seconds (at least 1).
    public var timeToLiveSeconds: Int
    /// `apns-collapse-id` and `android.collapse_key` (at most 64 bytes).
    public var collapseID: String
    /// `android.notification.channel_id`, when configured.
    public var androidChannelID: String?
    /// `android.notification.tag`: a shown notification with the same tag is replaced (SPEC 12.2; the collapse key
    /// only replaces messages not yet delivered).
    public var androidTag: String?

    public init(expiresAt: Int, timeToLiveSeconds: Int, collapseID: String, androidChannelID: String? = nil, androidTag: String? = nil) {
        self.expiresAt = expiresAt
        self.timeToLiveSeconds = timeToLiveSeconds
        self.collapseID = collapseID
        self.androidChannelID = androidChannelID
        self.androidTag = androidTag
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "expiresAt": .int(expiresAt), "timeToLiveSeconds": .int(timeToLiveSeconds), "collapseID": .string(collapseID),
        ]
        if let androidChannelID { object["androidChannelID"] = .string(androidChannelID) }
        if let androidTag { object["androidTag"] = .string(androidTag) }
        return .object(object)
    }
}
