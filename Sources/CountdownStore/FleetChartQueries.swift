import Foundation
import Postgres

/// The fleet page's charts: the last hour per minute, counted by PostgreSQL from the rows the fleet writes for the
/// streams near their start (`FleetStatsQueries.nearStreams`, through the tables' `stream_id`-first keys), so the
/// cost follows the streams in their window, not the size of the fleet.
public enum FleetChartQueries {
    /// Pushes in one minute of one series.
    public struct Count: Sendable, Equatable, Codable {
        /// The minute's start.
        public var minute: Date
        /// `start`, `update`, `end` or `reminder`.
        public var kind: String
        /// `ios` or `android`.
        public var platform: String
        /// `accepted` or `refused`.
        public var result: String
        public var count: Int
    }

    /// The longest wait of a start push in one minute: from when it was due (its stream's window opening, or the row's
    /// creation when later: a device that registered late) to when it was sent.
    public struct Lateness: Sendable, Equatable, Codable {
        public var minute: Date
        public var seconds: Double
    }

    /// Pushes per minute in the last hour by kind, platform and result. `aheadSeconds` as `FleetStatsQueries.counts`.
    public static func pushes(aheadSeconds: Int, on connection: PostgresConnection) throws -> [Count] {
        let window: [(any PostgresEncodable)?] = [Int(FleetStatsQueries.lateSettleAllowance.components.seconds) + 3600, aheadSeconds]
        return try connection.query(FleetStatsQueries.nearStreams + """
            , events AS (
                SELECT coalesce(l.sent_at, l.updated_at) AS at, 'start' AS kind, coalesce(d.platform, 'ios') AS platform,
                       CASE WHEN l.status = 'sent' THEN 'accepted' ELSE 'refused' END AS result
                FROM near JOIN countdown_start_ledger l ON l.stream_id = near.id LEFT JOIN devices d ON d.device_id = l.device_id
                WHERE l.status IN ('sent', 'failed') AND coalesce(l.sent_at, l.updated_at) > now() - interval '1 hour'
                UNION ALL
                SELECT l.android_ended_at, 'end', 'android',
                       CASE WHEN l.android_end_reason LIKE 'dead_token%' OR l.android_end_reason = 'undeliverable' THEN 'refused' ELSE 'accepted' END
                FROM near JOIN countdown_start_ledger l ON l.stream_id = near.id WHERE l.android_ended_at > now() - interval '1 hour'
                UNION ALL
                SELECT s.accepted_at, 'update', CASE WHEN s.channel = 'android_countdown' THEN 'android' ELSE 'ios' END, 'accepted'
                FROM near JOIN countdown_session_deliveries s ON s.stream_id = near.id WHERE s.seq > 1 AND s.accepted_at > now() - interval '1 hour'
                UNION ALL
                SELECT e.first_failed_at, 'end', 'ios', 'refused'
                FROM near JOIN countdown_end_attempts e ON e.stream_id = near.id WHERE e.first_failed_at > now() - interval '1 hour'
                UNION ALL
                SELECT r.sent_at, 'reminder', coalesce(d.platform, 'ios'), 'accepted'
                FROM near JOIN countdown_reminder_deliveries r ON r.stream_id = near.id LEFT JOIN devices d ON d.device_id = r.device_id
                WHERE r.status = 'sent' AND r.sent_at > now() - interval '1 hour'
            )
            SELECT date_trunc('minute', at) AS minute, kind, platform, result, count(*)::int AS n FROM events GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
            """, window).map {
            Count(minute: try $0.decode("minute"), kind: try $0.decode("kind"), platform: try $0.decode("platform"),
                  result: try $0.decode("result"), count: try $0.decode("n"))
        }
    }

    /// The longest start wait per minute in the last hour; `leadSeconds`: how long before a planned start its window opens.
    public static func startLateness(aheadSeconds: Int, leadSeconds: Int, on connection: PostgresConnection) throws -> [Lateness] {
        let window: [(any PostgresEncodable)?] = [Int(FleetStatsQueries.lateSettleAllowance.components.seconds) + 3600, aheadSeconds, leadSeconds]
        return try connection.query(FleetStatsQueries.nearStreams + """
            SELECT date_trunc('minute', l.sent_at) AS minute,
                   max(greatest(0, extract(epoch FROM l.sent_at - greatest(s.planned_start_at - make_interval(secs => $3::int), l.created_at))))::float8
                       AS seconds
            FROM near JOIN streams s ON s.id = near.id JOIN countdown_start_ledger l ON l.stream_id = near.id
            WHERE l.status = 'sent' AND l.sent_at > now() - interval '1 hour'
            GROUP BY 1 ORDER BY 1
            """, window).map { Lateness(minute: try $0.decode("minute"), seconds: try $0.decode("seconds")) }
    }
}
