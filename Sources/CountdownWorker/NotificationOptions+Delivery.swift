import Push
import PushPayloads

extension NotificationOptions {
    /// The transport's options for a payload's delivery (none when it has none).
    init(_ delivery: NotificationDelivery?) {
        guard let delivery else {
            self.init()
            return
        }
        self.init(apnsExpiration: delivery.expiresAt, collapseID: delivery.collapseID, androidTTLSeconds: delivery.timeToLiveSeconds,
                  androidChannelID: delivery.androidChannelID, androidTag: delivery.androidTag)
    }
}
