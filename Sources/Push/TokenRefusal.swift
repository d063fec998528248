import Telemetry
/// Which token of a push a refusal names.
public enum PushTokenKind: String, Sendable, Equatable, CaseIterable {
    /// The FCM registration token (`message.token`).
    case fcm
    /// The Live Activity token the push is addressed to (`apns.live_activity_token`, or the APNs device path):
    /// the push-to-start token for a start, the activity's runtime token for an update or an end.
    case activity
}

/// A push service's refusal of one token: the token it names, the service's reason, and what the refusal says
/// about the configuration when it is not a dead token.
public struct TokenRefusal: Sendable, Equatable {
    /// The token the refusal names; only that one may be cleared.
    public var token: PushTokenKind
    /// The service's short code (`UNREGISTERED`, `SENDER_ID_MISMATCH`, `INVALID_ARGUMENT`, `BadDeviceToken`, ...).
    public var reason: String
    /// The setting that makes the service refuse every token this way when it is wrong (shown when the token
    /// guard trips).
    public var suspect: String
    /// True when the refusal has the shape of a misconfiguration (a token of another project, environment or
    /// app) rather than of a token the device no longer uses.
    public var misconfigurationShaped: Bool

    public init(token: PushTokenKind, reason: String, suspect: String, misconfigurationShaped: Bool) {
        self.token = token
        self.reason = reason
        self.suspect = suspect
        self.misconfigurationShaped = misconfigurationShaped
    }

    /// The FCM project or credentials (a token registered with another Firebase project).
    public static let fcmProject = "FCM_PROJECT_ID / GOOGLE_APPLICATION_CREDENTIALS"
    /// The APNs environment (a sandbox token sent to production or the reverse).
    public static let apnsEnvironment = "APNS_ENVIRONMENT"
    /// The bundle id (a token of another app).
    public static let apnsBundle = "APNS_BUNDLE_ID"
}
