import Foundation

/// Which running activities need an update push, and at which `apns-priority` (SPEC 10.1). Pure.
public enum SessionUpdatePolicy {
    /// A start sent less than this long after the planned start last changed may have been built before the change,
    /// so its activity is updated too (one update too many is harmless; one too few leaves the old time showing).
    public static let startBuildMargin: TimeInterval = 5
    /// Updates to a later start more than this far ahead go at priority 5.
    public static let lowPriorityHorizon: TimeInterval = 15 * 60

    /// Whether a session must be sent the current `planned` start. `shown` is the planned start the session last
    /// accepted (its delivery record), nil when it never accepted an update; `startSentAt` is when the device's
    /// push-to-start was accepted (nil when unknown), `plannedChangedAt` when the stream's planned start last moved
    /// (nil: never).
    public static func needsUpdate(planned: Date, shown: Date?, startSentAt: Date?, plannedChangedAt: Date?) -> Bool {
        if let shown { return shown != planned }
        guard let startSentAt else { return true }
        guard let plannedChangedAt else { return false }
        return startSentAt <= plannedChangedAt.addingTimeInterval(startBuildMargin)
    }

    /// `apns-priority` of an update: 5 when the new start is later than the one the session last accepted and more
    /// than 15 minutes after `now`; 10 when it is earlier, 15 minutes away or less, or what the session shows is not
    /// known.
    public static func priority(planned: Date, shown: Date?, now: Date) -> Int {
        guard let shown, planned > shown, planned.timeIntervalSince(now) > lowPriorityHorizon else { return 10 }
        return 5
    }
}
