import CountdownDomain
import Foundation

/// The store calls of broadcast channels (SPEC 12.5): the flows', the channel keeper's and the API's. `StoreClient`
/// is the real one; each call is one statement or one transaction (`BroadcastChannels` holds the SQL).
public protocol BroadcastChannelStore: Sendable {
    /// The stream's channel, or the right to create it (`BroadcastChannels.claim`).
    func claimChannel(stream: String, claim: String, maxAlive: Int, holdSeconds: Int) async throws -> ChannelClaim
    /// Records Apple's id for a held intent; false when the intent is no longer the caller's.
    func recordChannelCreated(row: Int64, claim: String, channelID: String) async throws -> Bool
    /// Records a failed attempt of a held intent.
    func recordChannelFailure(row: Int64, claim: String, error: String, retryAfterSeconds: Double, giveUp: Bool) async throws
    /// The stream (with its viewer count) and its usable channel (with its `latestStartAt`), read together; nil when
    /// the stream is gone.
    func streamAndChannel(_ stream: String) async throws -> (stream: StreamSnapshotRow, channel: BroadcastChannel?)?
    /// A push carrying the channel went out showing `shown`.
    func markChannelUsed(_ channelID: String, shown: Date, replacing: Bool) async throws
    /// The channel is done: deleted at Apple after `deleteAfterSeconds`.
    func retireChannel(_ channelID: String, ended: Bool, deleteAfterSeconds: Double) async throws
    /// The long move (SPEC 12.2): the channel's activities outlived their 8 hours. In one transaction the channel is
    /// retired and the stream's outlived start-ledger rows are opened again (their devices get a new start, on a new channel).
    func retireMovedChannel(_ channelID: String, stream: String, deleteAfterSeconds: Double) async throws
    /// Of `devices`, those whose app reported iOS `minMajor` or later.
    func devices(_ devices: [String], reportingAtLeast minMajor: Int) async throws -> Set<String>
}

/// The channel keeper's store calls (`ChannelKeeper`).
public protocol ChannelKeeperStore: BroadcastChannelStore {
    func retireAbandonedChannels(graceSeconds: Double) async throws -> Int
    func dropUnneededChannelIntents() async throws -> Int
    func channelIntentsDue(holdSeconds: Int, limit: Int) async throws -> [String]
    func channelsDueForDeletion(limit: Int) async throws -> [String]
    func forgetChannel(_ channelID: String) async throws
    func orphanChannels(listed: [String], graceSeconds: Double) async throws -> [String]
    func forgetOrphanChannel(_ channelID: String) async throws
    func aliveChannels() async throws -> Int
}
