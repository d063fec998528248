import Foundation
import JSON

/// An Android countdown FCM data message (SPEC 10.4), independent of its transport: the `android` options and
/// the `data` map the app renders its ongoing notification from. There is no `notification` block: FCM would post
/// a plain notification of its own.
public struct AndroidCountdownMessage: Sendable, Equatable {
    /// The most bytes the `data` object may take as compact JSON. FCM allows 4096 bytes of payload; the rest is
    /// left to the token (about 160 bytes in practice, room for 400) and the `android` options, so the whole
    /// `messages:send` body stays under 4 KB too.
    public static let maxDataBytes = 3584
    /// FCM's longest time to live: 4 weeks.
    public static let maxTTLSeconds = 28 * 86_400
    /// `data.type` of every countdown message.
    public static let dataType = "stream_countdown"

    public var event: LiveActivityEvent
    public var priority: AndroidPriority
    /// `android.ttl` in whole seconds (sent as `"<n>s"`).
    public var ttlSeconds: Int
    /// `android.collapse_key`: `countdown-<short hash>` on start and update, nil on end.
    public var collapseKey: String?
    /// Every value a string; integers as decimal strings.
    public var data: [String: String]

    public init(event: LiveActivityEvent, priority: AndroidPriority, ttlSeconds: Int, collapseKey: String?, data: [String: String]) {
        self.event = event
        self.priority = priority
        self.ttlSeconds = ttlSeconds
        self.collapseKey = collapseKey
        self.data = data
    }

    /// `android.ttl` as FCM takes it, e.g. `"412s"`.
    public var ttl: String { "\(ttlSeconds)s" }

    /// `{"android":{…},"data":{…}}`, for logs and golden files.
    public var json: JSONValue {
        var android: [String: JSONValue] = ["priority": .string(priority.rawValue), "ttl": .string(ttl)]
        if let collapseKey { android["collapse_key"] = .string(collapseKey) }
        return .object(["android": .object(android), "data": .object(data.mapValues { .string($0) })])
    }

    /// `android.ttl` of a start or update: the whole seconds to the planned start, at least 1 (a countdown that can
    /// no longer arrive before the start is dropped rather than shown late), at most 4 weeks.
    public static func countdownTTLSeconds(plannedStart: Date, now: Date) -> Int {
        let seconds = PushPayloadBuilder.epochSeconds(plannedStart) - PushPayloadBuilder.epochSeconds(now)
        return min(maxTTLSeconds, max(1, seconds))
    }

    /// `android.ttl` of an end (SPEC 12.2): the seconds until `EndExpiry` (the longer of `END_DISMISS_AFTER_SECONDS`
    /// and the seconds until the countdown's `staleAt`, planned start + `EXPIRE_AFTER_SECONDS`); at least 1 (FCM
    /// reads 0 as "now or never"), at most 4 weeks.
    public static func endTTLSeconds(endDismissAfterSeconds: Int, plannedStart: Date, expireAfterSeconds: Int, now: Date) -> Int {
        let until = EndExpiry.epochSeconds(now: now, dismissAfterSeconds: endDismissAfterSeconds, shownStart: plannedStart,
                                           expireAfterSeconds: expireAfterSeconds)
        return min(maxTTLSeconds, max(1, until - PushPayloadBuilder.epochSeconds(now)))
    }

    /// `data` as compact JSON: what `maxDataBytes` bounds.
    public static func dataJSON(_ data: [String: String]) -> [UInt8] {
        var json = JSONWriter(capacity: 1024)
        json.object(data)
        return json.bytes
    }
}
