/// Sends Live Activity pushes through `liveActivities` and notifications through `notifications`: with
/// `PUSH_TRANSPORT=apns`, reminders (plain notifications) still go through FCM.
public struct RoutingTransport: PushTransport {
    private let liveActivities: any PushTransport
    private let notifications: any PushTransport

    public init(liveActivities: any PushTransport, notifications: any PushTransport) {
        self.liveActivities = liveActivities
        self.notifications = notifications
    }

    public func send(_ message: PushMessage) async -> PushResult {
        switch message.content {
        case .liveActivity: await liveActivities.send(message)
        case .notification: await notifications.send(message)
        }
    }
}
