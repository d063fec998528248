import CountdownDomain
import Foundation

/// The Android countdown fan-out's seam to the database: the countdowns (start-ledger rows of Android devices),
/// their claims and settlements, and their end deliveries. Each call is one transaction, as the fan-out ran it.
public protocol AndroidCountdownDeliveries: Sendable {
    typealias Countdown = AndroidCountdownQueries.Countdown

    /// Claims the countdowns on `device` that a device change concerns, with their streams (viewer counts filled),
    /// each stream's planned-start moves (the latest start a countdown ended now may show), and how many more it
    /// concerns that are held elsewhere (`AndroidCountdownQueries.changedClaimedElsewhere`).
    func claimChangedCountdowns(device: String, seconds: Int, owner: String?) async throws
        -> (streams: [String: StreamSnapshotRow], countdowns: [Countdown], timelines: [String: PlannedStartTimeline], elsewhere: Int, heldFor: Double?)

    /// An ended stream (nil when it is not ended or gone), its live countdowns claimed for `owner`, how many are
    /// claimed elsewhere, in how many seconds the earliest `Retry-After` hold among them ends (nil: none held), how
    /// many starts are in flight, and the stream's planned-start moves (the latest start each countdown may show).
    func claimCountdownsToEnd(_ stream: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], elsewhere: Int, heldFor: Double?, inFlight: Int, timeline: PlannedStartTimeline)?

    /// A scheduled stream (nil when it is not scheduled or gone), its live countdowns not showing its planned start
    /// claimed for `owner`, how many starts are in flight, and the stream's planned-start moves (what a start carried).
    func claimCountdownsToUpdate(_ stream: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], inFlight: Int, timeline: PlannedStartTimeline)?

    /// Settles one batch's accepted updates (`plannedStart`) or ends (`ended`: their end deliveries too).
    func countdownsAccepted(_ accepted: [AndroidCountdownQueries.Settlement], stream: String, plannedStart: Date?, ended: Bool) async throws

    /// In one transaction: clears `refused` and settles each stream's rows (streams in key order).
    func settleCountdowns(_ settlements: [String: [AndroidCountdownQueries.Settlement]], refused: [DeviceTokenQueries.Invalidation],
                          plannedStart: Date?) async throws

    /// In one transaction: clears `refused`, settles `settlements`, settles the end deliveries of `done` and records
    /// `failed` (given up on past `windowSeconds`), then holds the claims of `holding`'s countdowns (refused with a
    /// `Retry-After`), by no worker, for its seconds.
    func settleCountdownEnds(_ stream: String, _ settlements: [AndroidCountdownQueries.Settlement], refused: [DeviceTokenQueries.Invalidation],
                             done: [String], failed: [EndDeliveryQueries.Failure], windowSeconds: Int,
                             holding: [EndDeliveryQueries.Hold]) async throws -> EndDeliveryQueries.Outcome
}
