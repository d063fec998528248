import Foundation

/// Which running activities need an update push, and at which `apns-priority` (SPEC 10.1). Pure.
public enum SessionUpdatePolicy {
    /// A start sent less than this long after the planned start last changed may have been built before the change,
    /// so its activity is updated too (one update too many is harmless; one too few leaves the old time showing).
    public static let startBuildMargin: TimeInterval = 5
    /// How long iOS keeps a Live Activity after it started (SPEC 10.1, long reschedules).
    public static let activityLifetimeSeconds = 8 * 3600
    /// Updates to a later start more than this far ahead go at priority 5.
    public static let lowPriorityHorizon: TimeInterval = 15 * 60

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

    /// What a session of a stream whose planned start is `planned` needs. `shown` is the planned start the session
    /// last accepted (its delivery record), nil when it never accepted an update; `startSentAt` is when the device's
    /// push-to-start was accepted (nil when unknown), `startInFlight` whether it is being sent; `plannedChangedAt` is
    /// when the stream's planned start last moved (nil: never).
    public static func need(planned: Date, shown: Date?, startSentAt: Date?, startInFlight: Bool = false, plannedChangedAt: Date?) -> Need {
        if let startSentAt, planned.timeIntervalSince(startSentAt) > Double(activityLifetimeSeconds) { return .outlived }
        if let shown { return shown == planned ? .nothing : .update }
        guard let startSentAt else { return startInFlight ? .awaitingStart : .update }
        guard let plannedChangedAt else { return .nothing }
        return startSentAt <= plannedChangedAt.addingTimeInterval(startBuildMargin) ? .update : .nothing
    }

    /// `apns-priority` of an update: 5 when the new start is later than the one the session last accepted and more
    /// than 15 minutes after `now`; 10 when it is earlier, 15 minutes away or less, or what the session shows is not
    /// known.
    public static func priority(planned: Date, shown: Date?, now: Date) -> Int {
        guard let shown, planned > shown, planned.timeIntervalSince(now) > lowPriorityHorizon else { return 10 }
        return 5
    }
}
