/// One forward-only schema step. Versions are applied in order, each in its own transaction.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}

extension Migration {
    /// Every migration, oldest first. Never edit an applied one: add a new version.
    public static let all: [Migration] = [contractTables, internalTables, outboxTriggers, activeReminderIndex, pushSafety, quarantine,
                                          claimOwners, retiredSessions, reminderOutboxWhen, ledgerStreamTrigger, ledgerHotSettle,
                                          ledgerRoomToSettle, pauseState, sessionDeliveries, updateClaims, reminderDeliveries, ledgerGeneration,
                                          consoleAudit, plannedStartHistory, ownerlessDevices, androidCountdown, ledgerAssumedSent, reminderClaims,
                                          reminderFollow, activitySessions, reminderSentIndexes, streamEnds, restoreGuard, broadcastChannels,
                                          reminderSentInPlace]
}
