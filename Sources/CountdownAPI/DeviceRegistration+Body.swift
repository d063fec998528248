import CountdownStore

extension DeviceRegistration {
    /// Reads and checks the body: types first (400), then the guide's rules (422).
    init(body: JSONBody) throws(APIError) {
        let token = try body.string("token")
        let platform = try body.string("platform")
        let deviceID = try body.string("deviceId")
        let timezone = try body.string("timezone")
        let locale = try body.string("locale")
        let pushToStart = try body.string("liveActivityPushToStartToken")
        let osVersion = try body.string("osVersion")

        guard let deviceID else {
            let why = pushToStart == nil ? "is required" : "is required when liveActivityPushToStartToken is sent"
            throw APIError.invalid("deviceId", why)
        }
        let checkedDeviceID = try FieldRules.newDeviceID(deviceID)
        guard let platform else { throw APIError.invalid("platform", "is required (ios, android or web)") }
        let checkedPlatform = try FieldRules.platform(platform)
        let fcmToken = try token.map { (value) throws(APIError) in try FieldRules.fcmToken(value) }
        let pushToStartToken = try pushToStart.map { (value) throws(APIError) in
            try FieldRules.hexToken(value, field: "liveActivityPushToStartToken")
        }
        if pushToStartToken != nil && platform != "ios" {
            throw APIError.invalid("liveActivityPushToStartToken", "only iOS devices have push-to-start tokens (platform is \(platform))")
        }
        let checkedOS = try osVersion.map { (value) throws(APIError) in try FieldRules.osVersion(value) }
        if checkedOS != nil && platform != "ios" {
            throw APIError.invalid("osVersion", "is the iOS version; only iOS devices send it (platform is \(platform))")
        }
        if fcmToken == nil && pushToStartToken == nil {
            throw APIError.invalid("token", "is required (send liveActivityPushToStartToken without token only to update an existing device)")
        }
        self.init(deviceID: checkedDeviceID, platform: checkedPlatform, fcmToken: fcmToken, pushToStartToken: pushToStartToken,
                  timezone: try timezone.map { (value) throws(APIError) in try FieldRules.timezone(value) },
                  locale: try locale.map { (value) throws(APIError) in try FieldRules.locale(value) })
        self.osVersion = checkedOS
    }
}
