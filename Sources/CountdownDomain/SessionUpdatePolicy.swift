import Foundation

/// Which running activities need an update push (SPEC 10.1, 12.2); its priority follows `UpdatePriority`. Pure.
public enum SessionUpdatePolicy {
    /// A start sent less than this long after the planned start last changed may have been built before the change,
    /// so its activity is updated too (one update too many is harmless; one too few leaves the old time showing).
    public static let startBuildMargin: TimeInterval = 5
    /// How long iOS keeps a Live Activity after it started (SPEC 10.1, long reschedules).
    public static let activityLifetimeSeconds = 8 * 3600

    /// What a session needs.
    public enum Need: Sendable, Equatable {
        /// The current start: it shows another one, or what it shows is not known.
        case update
        /// Nothing: it shows the current start.
        case nothing
        /// Not known yet: the push-to-start that created its activity is in flight (sent, its answer not yet
        /// recorded); the update job looks again once it is.
        case awaitingStart
        /// Nothing more: its activity started more than 8 hours before the planned start and would end before the
        /// stream; it is ended at once (immediate dismissal) and the device gets a new push-to-start.
        case outlived
    }

    /// What a session's activity shows (SPEC 12.2): the planned start of the last push the push service accepted for
    /// it, the start included. `update` is the session's last accepted update (what it carried, when it was recorded),
    /// `startSentAt` when the device's push-to-start was accepted and `startCarried` what it carried (nil: not known,
    /// `PlannedStartTimeline.carriedByStart`). Nil when neither is known.
    public static func shown(update: (start: Date, acceptedAt: Date)?, startSentAt: Date?, startCarried: Date?) -> Date? {
        if let update, startSentAt.map({ update.acceptedAt >= $0 }) ?? true { return update.start }
        return startCarried
    }

    /// What a session of a stream whose planned start is `planned` needs. `shown` is what its activity shows (`shown(…)`,
    /// nil: not known); `startSentAt` is when the device's push-to-start was accepted (nil when unknown),
    /// `startInFlight` whether it is being sent.
    public static func need(planned: Date, shown: Date?, startSentAt: Date?, startInFlight: Bool = false) -> Need {
        if let startSentAt, planned.timeIntervalSince(startSentAt) > Double(activityLifetimeSeconds) { return .outlived }
        if let shown { return shown == planned ? .nothing : .update }
        return startSentAt == nil && startInFlight ? .awaitingStart : .update
    }
}
