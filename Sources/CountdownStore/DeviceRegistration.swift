/// A device registration as the API validated it (`POST /notifications/device-token`; its parsing is the API's).
///
/// With `token` (the FCM registration token) it registers or updates the whole device; without it, it only
/// updates the push-to-start token of a device that already exists.
public struct DeviceRegistration: Sendable, Equatable {
    public var deviceID: String
    public var platform: String
    /// FCM registration token; nil for a push-to-start-only update.
    public var fcmToken: String?
    /// ActivityKit push-to-start token as lowercase hex (iOS only).
    public var pushToStartToken: String?
    public var timezone: String?
    public var locale: String?

    /// Whether this only updates the push-to-start token of an existing device.
    public var isPushToStartUpdate: Bool { fcmToken == nil }

    public init(deviceID: String, platform: String, fcmToken: String?, pushToStartToken: String? = nil,
                timezone: String? = nil, locale: String? = nil) {
        self.deviceID = deviceID
        self.platform = platform
        self.fcmToken = fcmToken
        self.pushToStartToken = pushToStartToken
        self.timezone = timezone
        self.locale = locale
    }
}
