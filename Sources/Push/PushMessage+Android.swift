extension PushMessage {
    /// An FCM data message for an Android device (no `notification` block: the app renders it).
    public static func androidData(id: String, fcmToken: String, options: AndroidMessageOptions, data: [String: String]) -> PushMessage {
        PushMessage(id: id, content: .androidData(fcmToken: fcmToken, options: options, data: data))
    }
}
