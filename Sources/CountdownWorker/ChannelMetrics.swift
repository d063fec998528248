import CountdownFlows
import Telemetry

/// The broadcast channels' metrics (SPEC 12.5), on the worker's registry.
public final class ChannelMetrics: BroadcastMetrics {
    public let endRequests: Counter
    public let tokenFallbacks: Counter
    public let channelEvents: Counter
    public let alive: Gauge

    public init(registry: MetricsRegistry) {
        endRequests = registry.counter("countdown_stream_end_requests_total",
                                       help: "Requests stream ends cost, by path (broadcast: one per stream on its channel; token: one per session).",
                                       labels: ["path"])
        tokenFallbacks = registry.counter("countdown_broadcast_token_fallbacks_total",
                                          help: "Streams whose pushes went by token for lack of a channel, by reason.", labels: ["reason"])
        channelEvents = registry.counter("countdown_broadcast_channel_events_total",
                                         help: "Broadcast channels created, deleted, and orphans deleted at APNs.", labels: ["event"])
        alive = registry.gauge("countdown_broadcast_channels_alive", help: "Broadcast channels alive (counted against APNS_BROADCAST_MAX_CHANNELS).")
    }

    public func endRequests(path: String, count: Int) {
        endRequests.increment(by: UInt64(max(0, count)), labels: path)
    }

    public func tokenFallback(reason: String) {
        tokenFallbacks.increment(labels: WorkerMetrics.boundedLabel(reason))
    }

    public func channelEvent(_ event: String) {
        channelEvents.increment(labels: event)
    }
}
