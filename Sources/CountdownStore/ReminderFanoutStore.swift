import CountdownDomain
import Foundation

/// The reminder fan-out's seam to the database: the stream, its pages of active reminders and their recipients,
/// the per-device delivery claims, and the stream's progress. Each call is one statement or one transaction, as
/// the fan-out ran it.
public protocol ReminderFanoutStore: Sendable {
    /// The stream and where its pages of `pageSize` users end (nil when the stream is gone).
    func reminderPages(_ stream: String, pageSize: Int) async throws -> (stream: StreamSnapshotRow, ends: [String])?

    /// The stream (nil when it is gone), the next `limit` users with an active reminder after `cursor` (through
    /// `through`), and their devices as recipients.
    func reminderChunk(_ stream: String, after cursor: String, through: String?, limit: Int) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [ReminderStore.Recipient])

    /// The workers other than `except` holding reminder deliveries of `stream`.
    func reminderClaimOwners(_ stream: String, except: String?) async throws -> [String]

    /// In one transaction: claims `devices` for `owner` (`ReminderDeliveryStore.claim`).
    func claimReminders(_ stream: String, devices: [(device: String, user: String)], seconds: Int, owner: String?, deadOwners: [String]) async throws
        -> ReminderDeliveryStore.Claim

    /// Records the devices that took the reminder (`sent`) and lets go of `released`.
    func remindersDelivered(_ stream: String, sent: [String], released: [String], owner: String?) async throws

    /// In one transaction (deadlocks retried): clears `refused`, settles the devices and marks `users` sent.
    func settleReminders(_ stream: String, users: [String], refused: [DeviceTokenStore.Invalidation], sent: [String], released: [String],
                         owner: String?) async throws

    /// Records the stream's reminder as done for `planned`.
    func markRemindersDone(_ stream: String, planned: Date) async throws
}
