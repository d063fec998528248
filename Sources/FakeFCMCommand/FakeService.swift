/// Which fake a process serves: `countdown-fake-fcm` (FCM HTTP v1) or `countdown-fake-fcm apns`; each has its own
/// flags, variables (`FAKE_FCM_*`, `FAKE_APNS_*`), fault rules and routes.
enum FakeService: Sendable {
    case fcm, apns

    /// The program name in usage errors.
    var program: String { self == .fcm ? "countdown-fake-fcm" : "countdown-fake-fcm apns" }

    /// The prefix of this fake's own environment variables.
    var variablePrefix: String { self == .fcm ? "FAKE_FCM_" : "FAKE_APNS_" }
}
