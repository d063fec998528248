/// The timing and payload knobs of the flows (SPEC section 3).
public struct FlowSettings: Sendable, Equatable {
    public var startLeadSeconds: Int
    /// Most `START_LEAD_SECONDS` allowed (SPEC 10.1): iOS ends a Live Activity 8 hours after it started, so a start
    /// sent earlier than 7 hours before the planned start could end before the stream begins.
    public static let maxStartLeadSeconds = 7 * 3600
    public var reminderLeadSeconds: Int
    public var expireAfterSeconds: Int
    public var endDismissAfterSeconds: Int
    public var attributesType: String
    public var deepLinkScheme: String
    /// False with `REMINDER_TRANSPORT=off`: reminder jobs are recorded as done without sending.
    public var remindersEnabled: Bool = true
    /// True with `ANDROID_COUNTDOWN=on`: Android devices get new countdown starts (SPEC 10.4). Off stops new
    /// starts only; countdowns already showing still get their updates and ends.
    public var androidCountdownEnabled: Bool = false

    public init(startLeadSeconds: Int = 3600, reminderLeadSeconds: Int = 600, expireAfterSeconds: Int = 3600,
                endDismissAfterSeconds: Int = 900, attributesType: String = "AllmineLiveActivityAttributes",
                deepLinkScheme: String = "allmine") {
        self.startLeadSeconds = startLeadSeconds
        self.reminderLeadSeconds = reminderLeadSeconds
        self.expireAfterSeconds = expireAfterSeconds
        self.endDismissAfterSeconds = endDismissAfterSeconds
        self.attributesType = attributesType
        self.deepLinkScheme = deepLinkScheme
    }

    /// How early (by PostgreSQL's clock) a job may run before its computed due time; covers clock skew between
    /// Redis and PostgreSQL.
    public static let earlyTolerance: Double = 5
}
