import JSON

/// The broadcast channels of the device model: which activities subscribed to each, and the last message each
/// carried (APNs stores it, `message-storage-policy` 1, for a device that was not listening: it reaches an activity
/// that subscribes later, until its `apns-expiration`).
struct ModelChannels {
    /// A channel's last accepted broadcast.
    struct Stored {
        let aps: JSONValue
        /// When the fake accepted it.
        let acceptedAt: Double
        /// When APNs drops it (`apns-expiration`; 0: at once); nil: kept.
        let expiresAt: Double?
    }

    /// channel id → its subscribed activities, in subscription order.
    var subscribers: [String: [ModelActivity]] = [:]
    /// channel id → its last broadcast.
    var last: [String: Stored] = [:]
}
