import CountdownDomain
import Foundation

/// The reminder fan-out's seam to the database: the stream, its pages of active reminders and their recipients,
/// the claims of chunks of users and the records of the devices reached, and the stream's progress. Each call is
/// one statement or one transaction, as the fan-out ran it.
public protocol ReminderDeliveries: Sendable {
    /// The stream and where its pages of `pageSize` users with an active reminder (`includingSent`: or a sent one)
    /// end (nil when the stream is gone).
    func reminderPages(_ stream: String, pageSize: Int, includingSent: Bool) async throws -> (stream: StreamSnapshotRow, ends: [String])?

    /// For which planned start the stream's reminder last went out, and for which one a fan-out follows a move.
    func reminderProgress(_ stream: String) async throws -> (doneFor: Date?, followFor: Date?)

    /// Records that the stream's reminder fan-out for `planned` follows a move (its pages read the sent reminders).
    func markReminderFollow(_ stream: String, planned: Date) async throws

    /// The stream (nil when it is gone), the next `limit` users with an active reminder after `cursor` (through
    /// `through`; a sent one too when the fan-out for the stream's planned start follows a move), and their devices
    /// as recipients.
    func reminderChunk(_ stream: String, after cursor: String, through: String?, limit: Int) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [ReminderQueries.Recipient])

    /// The workers other than `except` holding live claims on reminder chunks of `stream`.
    func reminderClaimOwners(_ stream: String, except: String?) async throws -> [String]

    /// In one transaction: claims the range of users of `devices` for `owner`, sending for `planned`; devices reached
    /// for a planned start at most `leadSeconds` earlier count as sent (`ReminderDeliveryQueries.claim`).
    func claimReminders(_ stream: String, planned: Date, leadSeconds: Int, devices: [(device: String, user: String)], seconds: Int,
                        owner: String?, deadOwners: [String]) async throws -> ReminderDeliveryQueries.Claim

    /// Records the devices of the claim `claim` that took the reminder (one row for the batch).
    func remindersDelivered(_ stream: String, claim: Int64, sent: [String]) async throws

    /// In one transaction (deadlocks retried): clears `refused`, records `sent` (devices whose record could not be
    /// written as their answer arrived), marks `users` sent and releases the claim.
    func settleReminders(_ stream: String, users: [String], refused: [DeviceTokenQueries.Invalidation], claim: Int64?, sent: [String]) async throws

    /// Records the stream's reminder as done for `planned`.
    func markRemindersDone(_ stream: String, planned: Date) async throws
}
