import JSON

/// The broadcast channels of the device model: which activities subscribed to each, and the last message each
/// carried (APNs stores it, `message-storage-policy` 1, for a device that was not listening).
struct ModelChannels {
    /// channel id → its subscribed activities, in subscription order.
    var subscribers: [String: [ModelActivity]] = [:]
    /// channel id → the last broadcast's `aps`.
    var last: [String: JSONValue] = [:]
}
