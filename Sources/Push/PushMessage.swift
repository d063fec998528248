/// What the domain hands a transport: one push, independent of FCM or APNs.
public struct PushMessage: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// A Live Activity start, update or end. `apsJSON` is a complete `{"aps":{...}}` object; `apnsHeaders`
        /// are APNs headers such as `apns-priority` and `apns-expiration` (string values, as FCM requires).
        case liveActivity(fcmToken: String, activityToken: String, apnsHeaders: [String: String], apsJSON: [UInt8])
        /// A plain notification with a data payload and its delivery options.
        case notification(fcmToken: String, title: String, body: String, data: [String: String], options: NotificationOptions)
    }

    /// Names the push in logs and metrics (e.g. a job id and target device).
    public let id: String
    public let content: Content

    public init(id: String, content: Content) {
        self.id = id
        self.content = content
    }

    public static func liveActivity(
        id: String, fcmToken: String, activityToken: String, apnsHeaders: [String: String], apsJSON: [UInt8]
    ) -> PushMessage {
        PushMessage(id: id, content: .liveActivity(fcmToken: fcmToken, activityToken: activityToken, apnsHeaders: apnsHeaders, apsJSON: apsJSON))
    }

    public static func notification(
        id: String, fcmToken: String, title: String, body: String, data: [String: String], options: NotificationOptions = NotificationOptions()
    ) -> PushMessage {
        PushMessage(id: id, content: .notification(fcmToken: fcmToken, title: title, body: body, data: data, options: options))
    }
}
