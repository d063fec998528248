import Push
import PushPayloads

extension PushMessage {
    /// An Android countdown message (SPEC 10.4) as the push transports take it, to the device's FCM token.
    static func androidCountdown(id: String, fcmToken: String, _ message: AndroidCountdownMessage) -> PushMessage {
        let priority: AndroidMessageOptions.Priority = switch message.priority {
        case .high: .high
        case .normal: .normal
        }
        return .androidData(id: id, fcmToken: fcmToken,
                            options: AndroidMessageOptions(priority: priority, ttlSeconds: message.ttlSeconds, collapseKey: message.collapseKey),
                            data: message.data)
    }
}
