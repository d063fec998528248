/// The configurable parts of the payloads (from `LIVE_ACTIVITY_ATTRIBUTES_TYPE`, `DEEP_LINK_SCHEME`,
/// `EXPIRE_AFTER_SECONDS`, `END_DISMISS_AFTER_SECONDS`, `REMINDER_ANDROID_CHANNEL_ID`).
public struct PayloadSettings: Sendable, Equatable {
    /// `attributes-type` of start pushes: the app's `ActivityAttributes` type name.
    public var attributesType: String
    /// Scheme of the deep links `<scheme>://live-stream/<id>` and `<scheme>://home`.
    public var deepLinkScheme: String
    /// Seconds after the planned start at which a countdown goes stale (`stale-date`).
    public var expireAfterSeconds: Int
    /// Seconds from sending an end push until iOS removes the ended activity (`dismissal-date`).
    public var endDismissAfterSeconds: Int
    /// `android.notification.channel_id` of reminders; nil leaves the channel to the app's default.
    public var reminderAndroidChannelID: String?

    public init(
        attributesType: String = "AllmineLiveActivityAttributes", deepLinkScheme: String = "allmine",
        expireAfterSeconds: Int = 3600, endDismissAfterSeconds: Int = 900, reminderAndroidChannelID: String? = nil
    ) {
        self.attributesType = attributesType
        self.deepLinkScheme = deepLinkScheme
        self.expireAfterSeconds = expireAfterSeconds
        self.endDismissAfterSeconds = endDismissAfterSeconds
        self.reminderAndroidChannelID = reminderAndroidChannelID
    }

    /// Throws when a value cannot produce a sensible payload.
    public func validate() throws(PushPayloadError) {
        let typeOK = !attributesType.isEmpty && attributesType.utf8.count <= 128
            && attributesType.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ".") }
        guard typeOK else {
            throw PushPayloadError(.invalidSettings, "attributesType \"\(attributesType)\" is not a Swift type name")
        }
        let scheme = Array(deepLinkScheme.utf8)
        let schemeOK = (1...32).contains(scheme.count) && isLetter(scheme[0])
            && scheme.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }
        guard schemeOK else {
            throw PushPayloadError(.invalidSettings, "deepLinkScheme \"\(deepLinkScheme)\" is not a URL scheme")
        }
        guard (0...86_400 * 7).contains(expireAfterSeconds) else {
            throw PushPayloadError(.invalidSettings, "expireAfterSeconds \(expireAfterSeconds) is not within 0…604800")
        }
        guard (0...86_400).contains(endDismissAfterSeconds) else {
            throw PushPayloadError(.invalidSettings, "endDismissAfterSeconds \(endDismissAfterSeconds) is not within 0…86400")
        }
    }

    private func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
}
