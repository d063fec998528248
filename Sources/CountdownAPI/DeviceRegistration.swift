/// A validated `POST /notifications/device-token` body.
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

    /// Reads and checks the body: types first (400), then the guide's rules (422).
    init(body: JSONBody) throws(APIError) {
        let token = try body.string("token")
        let platform = try body.string("platform")
        let deviceID = try body.string("deviceId")
        let timezone = try body.string("timezone")
        let locale = try body.string("locale")
        let pushToStart = try body.string("liveActivityPushToStartToken")

        guard let deviceID else {
            let why = pushToStart == nil ? "is required" : "is required when liveActivityPushToStartToken is sent"
            throw APIError.invalid("deviceId", why)
        }
        self.deviceID = try FieldRules.newDeviceID(deviceID)
        guard let platform else { throw APIError.invalid("platform", "is required (ios, android or web)") }
        self.platform = try FieldRules.platform(platform)
        fcmToken = try token.map { (value) throws(APIError) in try FieldRules.fcmToken(value) }
        pushToStartToken = try pushToStart.map { (value) throws(APIError) in
            try FieldRules.hexToken(value, field: "liveActivityPushToStartToken")
        }
        if pushToStartToken != nil && platform != "ios" {
            throw APIError.invalid("liveActivityPushToStartToken", "only iOS devices have push-to-start tokens (platform is \(platform))")
        }
        if fcmToken == nil && pushToStartToken == nil {
            throw APIError.invalid("token", "is required (send liveActivityPushToStartToken without token only to update an existing device)")
        }
        self.timezone = try timezone.map { (value) throws(APIError) in try FieldRules.timezone(value) }
        self.locale = try locale.map { (value) throws(APIError) in try FieldRules.locale(value) }
    }
}
