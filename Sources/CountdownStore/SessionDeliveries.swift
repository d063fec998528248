import CountdownDomain
import Foundation

/// The session fan-out's seam to the database: runtime sessions, their end deliveries (`EndDeliveryQueries`), the
/// sessions a takeover retired, and the update fan-out's claim, progress and delivery records. Each call is one
/// statement or one transaction, as the fan-out ran it.
public protocol SessionDeliveries: Sendable {
    typealias Session = SessionQueries.Session

    /// The workers other than `except` holding end claims on `stream`'s sessions.
    func endClaimOwners(_ stream: String, except: String?) async throws -> [String]

    /// In one transaction: the stream (with its viewer count) and its sessions, or `device`'s. For an ended stream,
    /// only the sessions this call claimed for `claimingFor` seconds (an end push goes to each session once), how
    /// many others hold, and in how many seconds the earliest `Retry-After` hold among them ends (nil: none held).
    func sessions(of stream: String, device: String?, claimingFor seconds: Int, owner: String?, deadOwners: [String]) async throws
        -> (stream: StreamSnapshotRow, othersClaimed: Int, heldFor: Double?, sessions: [Session])?

    /// In one transaction: deletes `accepted` (their end push was accepted) and settles their end deliveries.
    func endsAccepted(_ accepted: [Session], stream: String) async throws -> Int

    /// In one transaction: clears `refused` tokens, deletes `finished`, settles the end deliveries of `done`,
    /// records `failed` (given up on past `windowSeconds`) and releases the end claims of `claimed`, but for
    /// `holding`'s devices (refused with a `Retry-After`): their claims are held, by no worker, for its seconds.
    func settleEnds(_ stream: String, refused: [DeviceTokenQueries.Invalidation], finished: [Session], done: [Session],
                    failed: [EndDeliveryQueries.Failure], windowSeconds: Int, claimed: [String],
                    holding: [EndDeliveryQueries.Hold]) async throws
        -> (deleted: Int, ledger: EndDeliveryQueries.Outcome)

    /// In one transaction: claims `device`'s retired sessions of `stream`, counts them, and reads the stream (nil
    /// when none was claimed or the stream is gone).
    func claimRetired(stream: String, device: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow?, retired: [RetiredSessionQueries.Retired], total: Int)

    /// Deletes the retired sessions of `tokens` (done with).
    func finishRetired(stream: String, device: String, tokens: [String]) async throws -> Int

    /// In one transaction: clears `refused`, deletes the retired sessions of `done` and records `failed`.
    func settleRetired(stream: String, device: String, refused: [DeviceTokenQueries.Invalidation], done: [String],
                       failed: [RetiredSessionQueries.Failure], windowSeconds: Int) async throws -> EndDeliveryQueries.Outcome

    /// The workers other than `except` holding `stream`'s update claim.
    func updateClaimOwners(_ stream: String, except: String?) async throws -> [String]
    func claimUpdate(_ stream: String, claim: String, seconds: Int, owner: String?, deadOwners: [String]) async throws -> ProgressQueries.UpdateClaim
    /// Extends the update claim `claim` to `seconds` from now; `false` when it is no longer held.
    func extendUpdate(_ stream: String, claim: String, seconds: Int) async throws -> Bool
    func releaseUpdate(_ stream: String, claim: String) async throws
    func plannedStart(_ stream: String) async throws -> Date?
    func markUpdateDone(_ stream: String, planned: Date) async throws

    /// In one transaction: opens `stream`'s outlived ledger rows again and retires `devices`' sessions.
    func retireOutlived(_ stream: String, devices: [String]) async throws

    /// In one repeatable-read transaction: the stream, its sessions and what they show.
    func sessionsToUpdate(_ stream: String) async throws -> (stream: StreamSnapshotRow, sessions: [Session], known: SessionDeliveryQueries.Knowledge)?

    /// Records that `accepted` sessions took `shown` as a live activity update.
    func updatesAccepted(_ stream: String, accepted: [Session], shown: Date) async throws

    /// In one transaction: clears `refused` and records `accepted` as `updatesAccepted` does.
    func settleUpdates(_ stream: String, refused: [DeviceTokenQueries.Invalidation], accepted: [Session], shown: Date) async throws
}
