import CountdownDomain
import CountdownStore
import PushPayloads

/// Apple's broadcast channels as the flows see them (SPEC 12.5): the seam between the flows and `APNsChannels`
/// (or a fake in tests). Outcomes are `Delivery`s, as for token pushes.
public protocol ChannelService: Sendable {
    /// Creates a channel; accepted with its id as `name`.
    func createChannel() async -> Delivery
    /// Deletes a channel; one Apple no longer knows counts as deleted.
    func deleteChannel(_ channelID: String) async -> Delivery
    /// Every channel of the app, or why not (not `.accepted`).
    func listChannels() async -> (outcome: Delivery, channels: [String])
    /// One broadcast push to every activity subscribed to `channelID`; a channel Apple does not know is
    /// `.rejected` with one of `channelGoneReasons`.
    func broadcast(_ payload: LiveActivityPayload, on channelID: String) async -> Delivery
}

/// Apple's reasons for a channel it does not know.
public let channelGoneReasons: Set<String> = ["BadChannelId", "ChannelNotRegistered"]

/// What broadcast channels count (the worker's metrics; a fake in tests).
public protocol BroadcastMetrics: Sendable {
    /// Requests one stream's end cost, by path (`broadcast`, `token`).
    func endRequests(path: String, count: Int)
    /// A stream's pushes went by token because it has no channel, by reason (`channel_limit`, `channel_failed`, ...).
    func tokenFallback(reason: String)
    /// A channel created at Apple (`created`), deleted (`deleted`), or found orphaned and deleted (`orphan`).
    func channelEvent(_ event: String)
}

/// `APNS_BROADCAST=on`: what the flows need to use a channel per stream.
public struct BroadcastSetup: Sendable {
    public let channels: any ChannelService
    public let store: any BroadcastChannelStore
    public let metrics: any BroadcastMetrics
    /// `APNS_BROADCAST_MAX_CHANNELS`: past it, new streams use token pushes.
    public let maxChannels: Int
    /// How long one caller holds a channel intent before another may take it over (a crashed creator).
    public let holdSeconds: Int
    /// Attempts to create a stream's channel before it stays on token pushes.
    public let maxAttempts: Int
    /// The backoff after failed attempt number n (the queue's retry policy).
    public let backoff: @Sendable (Int) -> Duration
    /// How long a start waits for a stream's channel that another caller is creating (its iOS 18 devices only):
    /// longer than Apple takes to answer, short enough that the start is not late.
    public let startWait: Duration
    /// How often a waiting start looks at the channel again.
    public let pollInterval: Duration
    /// Sleeps between looks (the clock; instant or scripted in tests).
    public let sleep: @Sendable (Duration) async -> Void

    public init(channels: any ChannelService, store: any BroadcastChannelStore, metrics: any BroadcastMetrics, maxChannels: Int,
                holdSeconds: Int = 60, maxAttempts: Int = 8, backoff: @escaping @Sendable (Int) -> Duration,
                startWait: Duration = .seconds(5), pollInterval: Duration = .milliseconds(100),
                sleep: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }) {
        self.channels = channels
        self.store = store
        self.metrics = metrics
        self.maxChannels = maxChannels
        self.holdSeconds = holdSeconds
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.startWait = startWait
        self.pollInterval = max(pollInterval, .milliseconds(1))
        self.sleep = sleep
    }

    /// The first major iOS version whose activities can subscribe to a channel.
    public static let channelOSMajor = 18
}
