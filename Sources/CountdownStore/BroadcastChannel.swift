import Foundation

/// One row of `countdown_broadcast_channels`: a channel a stream uses, used, or means to use (SPEC 12.5).
public struct BroadcastChannel: Sendable, Equatable, Codable {
    /// Where the channel is in its life.
    public enum State: String, Sendable, CaseIterable, Codable {
        /// Recorded before asking Apple; `claim` names the one caller asking.
        case intent
        /// Apple answered its id; no push has carried it yet.
        case created
        /// A start carried it, or a broadcast went on it.
        case inUse = "in_use"
        /// Ended (or replaced after a long move): Apple's channel is deleted after `deleteAfter`.
        case deleting
        /// Could not be created after every attempt: the stream stays on token pushes.
        case failed
    }

    public var row: Int64
    public var stream: String
    public var state: State
    /// Apple's `apns-channel-id`, once created.
    public var channelID: String?
    /// Failed attempts to create it so far.
    public var attempts: Int
    public var lastError: String?
    /// When a push first carried it.
    public var usedAt: Date?
    /// The `scheduledStartAt` of the last push accepted on it (a start carrying it, or a broadcast): what its
    /// activities show, for the priority rule (SPEC 12.2).
    public var shownStartAt: Date?
    /// The latest planned start any of its activities may show (`BroadcastChannels.latestStart`; read only with the
    /// stream, `streamAndChannel`): one that missed an update moving the start earlier still shows a later one.
    public var latestStartAt: Date?
    /// When its end broadcast was accepted.
    public var endedAt: Date?
    /// When Apple's channel goes (state `deleting`).
    public var deleteAfter: Date?

    public init(row: Int64, stream: String, state: State, channelID: String?, attempts: Int = 0, lastError: String? = nil,
                usedAt: Date? = nil, shownStartAt: Date? = nil, endedAt: Date? = nil, deleteAfter: Date? = nil) {
        self.row = row
        self.stream = stream
        self.state = state
        self.channelID = channelID
        self.attempts = attempts
        self.lastError = lastError
        self.usedAt = usedAt
        self.shownStartAt = shownStartAt
        self.endedAt = endedAt
        self.deleteAfter = deleteAfter
    }
}

/// What asking for a stream's channel answered (`BroadcastChannelStore.claimChannel`).
public enum ChannelClaim: Sendable, Equatable {
    /// The stream has a usable channel.
    case ready(BroadcastChannel)
    /// The caller holds the intent: it asks Apple, then records the id (`recordCreated`) or the failure.
    /// `attempt` is 1 for the first try.
    case create(row: Int64, claim: String, attempt: Int)
    /// Another caller holds the intent and is creating it now: its answer is due within seconds.
    case held
    /// Its next attempt is not due yet (a failed attempt's backoff), or its old channel is being deleted: token pushes for now.
    case waiting
    /// Every attempt failed: the stream stays on token pushes.
    case failed
    /// `APNS_BROADCAST_MAX_CHANNELS` channels are alive: the stream stays on token pushes.
    case atCapacity
}
