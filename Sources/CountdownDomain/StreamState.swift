import Foundation

/// What the planner needs to know about one stream, read from PostgreSQL in one query.
public struct StreamState: Sendable, Equatable {
    public var id: String
    public var status: StreamStatus
    public var plannedStartAt: Date
    /// The planned start for which the start fan-out completed, if it did.
    public var startDoneFor: Date?
    /// The planned start for which the reminder fan-out completed, if it did.
    public var reminderDoneFor: Date?
    public var hasActiveReminders: Bool
    /// Running activities an update or end reaches: runtime sessions, live Android countdowns, or a broadcast
    /// channel in use (its activities register no session).
    public var hasSessions: Bool
    /// The planned start whose update push running activities still need (set when the start moved).
    public var updatePendingFor: Date?

    public init(id: String, status: StreamStatus, plannedStartAt: Date, startDoneFor: Date? = nil, reminderDoneFor: Date? = nil,
                hasActiveReminders: Bool = false, hasSessions: Bool = false, updatePendingFor: Date? = nil) {
        self.id = id
        self.status = status
        self.plannedStartAt = plannedStartAt
        self.startDoneFor = startDoneFor
        self.reminderDoneFor = reminderDoneFor
        self.hasActiveReminders = hasActiveReminders
        self.hasSessions = hasSessions
        self.updatePendingFor = updatePendingFor
    }

    /// Whether running activities still wait for an update push with the current planned start.
    public var needsUpdate: Bool { updatePendingFor == plannedStartAt }
}
