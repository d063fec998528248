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
    /// The iOS version the app reported (`osVersion`), validated, with its major version; recorded apart from the
    /// device row (`countdown_device_os`).
    public var osVersion: (version: String, major: Int)? {
        get { os.map { ($0.version, $0.major) } }
        set { os = newValue.map { OSVersion(version: $0.version, major: $0.major) } }
    }
    private var os: OSVersion?

    private struct OSVersion: Sendable, Equatable {
        var version: String
        var major: Int
    }

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
