/// One device of a stream participant, as the start fan-out sees it.
public struct DeviceCandidate: Sendable, Equatable {
    public var userID: String
    public var role: String
    public var deviceID: String
    public var platform: String
    public var fcmToken: String?
    public var pushToStartToken: String?
    /// The device's locale, if it reported one.
    public var locale: String?
    /// The user's locale (the fallback for payload language).
    public var userLocale: String?
    public var liveStreamEnabled: Bool

    public init(userID: String, role: String, deviceID: String, platform: String, fcmToken: String?, pushToStartToken: String?,
                locale: String?, userLocale: String? = nil, liveStreamEnabled: Bool) {
        self.userID = userID
        self.role = role
        self.deviceID = deviceID
        self.platform = platform
        self.fcmToken = fcmToken
        self.pushToStartToken = pushToStartToken
        self.locale = locale
        self.userLocale = userLocale
        self.liveStreamEnabled = liveStreamEnabled
    }

    /// An Android device: it gets the countdown by FCM data message (SPEC 10.4), not a push-to-start.
    public var isAndroid: Bool { platform == "android" }
}

/// Why a device gets no start push. Raw values are metric labels and ledger reasons.
public enum StartSkipReason: String, Sendable, CaseIterable {
    case notIOS = "not_ios"
    case noFCMToken = "no_fcm_token"
    case noPushToStartToken = "no_push_to_start_token"
    case preferenceOff = "preference_off"
}

/// Decides whether a device may get a push-to-start, or with `ANDROID_COUNTDOWN=on` an Android device the
/// countdown's start message (SPEC sections 5 and 10.4). Pure.
public enum StartEligibility {
    /// `nil` when the device is eligible, otherwise the first reason it is not. `androidCountdown`: Android devices
    /// with an FCM token are eligible (they need no push-to-start token, on any transport).
    public static func skipReason(for device: DeviceCandidate, transport: PushTransportKind = .fcm,
                                  androidCountdown: Bool = false) -> StartSkipReason? {
        if !device.liveStreamEnabled { return .preferenceOff }
        if androidCountdown && device.isAndroid { return (device.fcmToken ?? "").isEmpty ? .noFCMToken : nil }
        if device.platform != "ios" { return .notIOS }
        if (device.pushToStartToken ?? "").isEmpty { return .noPushToStartToken }
        if transport != .apns && (device.fcmToken ?? "").isEmpty { return .noFCMToken }
        return nil
    }
}
