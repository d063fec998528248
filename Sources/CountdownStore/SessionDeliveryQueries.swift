import CountdownDomain
import Foundation
import Postgres

/// `countdown_session_deliveries`: the state each running countdown last accepted (SPEC 10.1), and what the update
/// fan-out needs to decide who still needs the current one.
public enum SessionDeliveryQueries {
    /// Where a countdown runs: an iOS Live Activity (a runtime session) or an Android device's countdown.
    public enum Channel: String, Sendable, CaseIterable { case liveActivity = "live_activity", androidCountdown = "android_countdown" }

    /// What one countdown (a device's activity) of a stream last accepted.
    public struct Record: Sendable, Equatable {
        public var device: String
        /// The activity's id ('' for a session registered without one, and for an Android countdown).
        public var activity: String
        public var token: String
        public var shownStartAt: Date
        public var seq: Int
        /// When the push carrying `shownStartAt` was recorded as accepted.
        public var acceptedAt: Date
    }

    /// A record's key: sessions are per activity (SPEC 12.1).
    public struct Key: Sendable, Hashable {
        public var device: String
        public var activity: String

        public init(device: String, activity: String) {
            self.device = device
            self.activity = activity
        }
    }

    /// What the update fan-out knows of a stream's countdowns: their records by device and activity, when each
    /// device's push-to-start was accepted (and, for a start that took more than one attempt, since when it may have
    /// gone out), which devices' push-to-start is being sent (claimed, its answer not yet recorded), and the stream's
    /// planned-start moves.
    public struct Knowledge: Sendable {
        public var records: [Key: Record]
        public var startSentAt: [String: Date]
        public var startFirstAttemptAfter: [String: Date]
        public var startInFlight: Set<String>
        public var timeline: PlannedStartTimeline

        /// What the activity `key` shows (SPEC 12.2): its last accepted update, or what its device's push-to-start
        /// carried when that came later; nil when not known.
        public func shown(_ key: Key, buildMargin: TimeInterval = SessionUpdatePolicy.startBuildMargin) -> Date? {
            let sentAt = startSentAt[key.device]
            let carried = sentAt.flatMap {
                timeline.carriedByStart(sentAt: $0, buildMargin: buildMargin, firstAttemptAfter: startFirstAttemptAfter[key.device])
            }
            return SessionUpdatePolicy.shown(update: records[key].map { ($0.shownStartAt, $0.acceptedAt) }, startSentAt: sentAt,
                                             startCarried: carried)
        }
    }

    /// The stream's records on `channel`, the devices' push-to-start times and sends in flight (from the start
    /// ledger: `sending` under an unexpired claim; a claim its dead owner left to expire is no longer in flight, or an
    /// update would wait for it until the start job next runs) and its planned-start moves, for a stream planned at
    /// `planned` now. Read it in the transaction that reads the stream (repeatable read), so the planned start and its
    /// moves agree.
    public static func knowledge(_ stream: String, planned: Date, channel: Channel, on connection: PostgresConnection) throws -> Knowledge {
        var records: [Key: Record] = [:]
        for row in try connection.query("""
            SELECT device_id, activity_id, token, shown_start_at, seq, accepted_at FROM countdown_session_deliveries
            WHERE stream_id = $1 AND channel = $2
            """, [stream, channel.rawValue]) {
            let record = Record(device: try row.decode("device_id"), activity: try row.decode("activity_id"), token: try row.decode("token"),
                                shownStartAt: try row.decode("shown_start_at"), seq: try row.decode("seq"), acceptedAt: try row.decode("accepted_at"))
            records[Key(device: record.device, activity: record.activity)] = record
        }
        var sent: [String: Date] = [:]
        var firstAttempt: [String: Date] = [:]
        var inFlight = Set<String>()
        for row in try connection.query("""
            SELECT device_id, max(sent_at) AS sent_at, bool_or(status = 'sending' AND claimed_until > now()) AS in_flight,
                   min(created_at) FILTER (WHERE attempts > 1) AS repeated_since
            FROM countdown_start_ledger
            WHERE stream_id = $1 AND (sent_at IS NOT NULL OR status = 'sending') GROUP BY device_id
            """, [stream]) {
            let device: String = try row.decode("device_id")
            if let at = try row.decode("sent_at", as: Date?.self) { sent[device] = at }
            if let since = try row.decode("repeated_since", as: Date?.self) { firstAttempt[device] = since }
            if try row.decode("in_flight", as: Bool.self) { inFlight.insert(device) }
        }
        return Knowledge(records: records, startSentAt: sent, startFirstAttemptAfter: firstAttempt, startInFlight: inFlight,
                         timeline: try PlannedStartHistoryQueries.timeline(stream, current: planned, on: connection))
    }

    /// Records that `accepted` (device, activity, token) took the state of `shown` on `channel`; each record's
    /// `seq` grows by one.
    public static func recordAccepted(_ stream: String, channel: Channel, accepted: [(device: String, activity: String, token: String)], shown: Date,
                                      on connection: PostgresConnection) throws {
        guard !accepted.isEmpty else { return }
        let sorted = accepted.sorted { ($0.device, $0.activity) < ($1.device, $1.activity) }
        try connection.execute("""
            INSERT INTO countdown_session_deliveries (stream_id, device_id, activity_id, channel, token, shown_start_at)
            SELECT $1, d, a, $2, t, $5 FROM unnest($3::text[], $6::text[], $4::text[]) AS u(d, a, t)
            ON CONFLICT (stream_id, device_id, channel, activity_id) DO UPDATE SET token = EXCLUDED.token,
                shown_start_at = EXCLUDED.shown_start_at, accepted_at = now(), seq = countdown_session_deliveries.seq + 1
            """, [stream, channel.rawValue, PostgresTextArray(sorted.map(\.device)), PostgresTextArray(sorted.map(\.token)), shown,
                  PostgresTextArray(sorted.map(\.activity))])
    }
}
