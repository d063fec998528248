import JSON

/// `message.android` of an FCM data message: how FCM delivers it to an Android device.
public struct AndroidMessageOptions: Sendable, Equatable {
    /// `android.priority`.
    public enum Priority: String, Sendable, Equatable, CaseIterable {
        case high = "HIGH"
        case normal = "NORMAL"
    }

    public var priority: Priority
    /// `android.ttl` in whole seconds, sent as `"<n>s"` (FCM keeps an undelivered message this long, at most 4 weeks).
    public var ttlSeconds: Int
    /// `android.collapse_key`: a newer message with the same key replaces an undelivered older one (nil: none).
    public var collapseKey: String?

    public init(priority: Priority, ttlSeconds: Int, collapseKey: String? = nil) {
        self.priority = priority
        self.ttlSeconds = ttlSeconds
        self.collapseKey = collapseKey
    }

    /// `{"priority":…,"ttl":"<n>s"[,"collapse_key":…]}`.
    func write(into json: inout JSONWriter) {
        json.object { android in
            android.key("priority")
            android.string(priority.rawValue)
            android.key("ttl")
            android.string("\(max(0, ttlSeconds))s")
            if let collapseKey {
                android.key("collapse_key")
                android.string(collapseKey)
            }
        }
    }
}
