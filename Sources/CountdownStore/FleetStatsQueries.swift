import Foundation
import Postgres

/// The PostgreSQL half of the fleet's figures (`countdown-admin stats`, the console's `/`): outbox backlog, streams
/// by status, and the last hour's start decisions and sent reminders. The last hour's figures read only the streams
/// whose start window is near now, through the ledger's and the reminders' primary keys (`stream_id` first): the
/// ledger has no index on `updated_at`, on purpose (settlements stay HOT updates), and a scan of it takes seconds
/// on a large fleet.
///
/// A start decision or a reminder is written only while its stream's window is open (from the lead before the
/// planned start until the start; a job that runs late settles as `too_late` after it). So a row touched in the
/// last hour belongs to a stream planned at most `aheadSeconds` ahead and at most an hour plus
/// `lateSettleAllowance` ago, or to one whose planned start changed in the last hour. Rows settled more than
/// `lateSettleAllowance` after their stream's planned start (a queue hours late) are not counted.
public enum FleetStatsQueries {
    public struct Counts: Sendable, Equatable {
        public var outboxBacklog = 0
        public var outboxOldestAgeSeconds = 0.0
        /// Start ledger rows touched in the last hour, by `status` or `status:reason` (the reason's part before `:`).
        public var recentStartResults: [String: Int] = [:]
        /// The same for Android devices only (their countdown's starts, and why the others got none).
        public var recentAndroidStartResults: [String: Int] = [:]
        /// Android countdowns of the same streams ended in the last hour, by end reason (the part before `:`).
        public var androidEndsLastHour: [String: Int] = [:]
        public var remindersSentLastHour = 0
        public var streamsByStatus: [String: Int] = [:]

        public init() {}
    }

    /// How long after its stream's planned start a late start decision still counts in the last hour's figures.
    public static let lateSettleAllowance: Duration = .seconds(2 * 3600)

    /// `aheadSeconds`: the longest lead before a planned start at which starts or reminders go out (with the
    /// early tolerance).
    public static func counts(aheadSeconds: Int, on connection: PostgresConnection) throws -> Counts {
        var counts = Counts()
        (counts.outboxBacklog, counts.outboxOldestAgeSeconds) = try OutboxQueries.backlog(on: connection)
        for row in try connection.query("SELECT status, count(*) AS n FROM streams GROUP BY status") {
            counts.streamsByStatus[try row.decode("status")] = try row.decode("n")
        }
        let window: [(any PostgresEncodable)?] = [Int(lateSettleAllowance.components.seconds) + 3600, aheadSeconds]
        for row in try connection.query(nearStreams + """
            SELECT CASE WHEN l.status IN ('sent', 'pending', 'sending') THEN l.status
                        ELSE l.status || ':' || coalesce(split_part(l.reason, ':', 1), '') END AS label,
                   coalesce(d.platform = 'android', false) AS android, count(*) AS n
            FROM near JOIN countdown_start_ledger l ON l.stream_id = near.id LEFT JOIN devices d ON d.device_id = l.device_id
            WHERE l.updated_at > now() - interval '1 hour' GROUP BY 1, 2 ORDER BY 1, 2
            """, window) {
            let label: String = try row.decode("label")
            let n: Int = try row.decode("n")
            counts.recentStartResults[label, default: 0] += n
            if try row.decode("android", as: Bool.self) { counts.recentAndroidStartResults[label, default: 0] += n }
        }
        for row in try connection.query(nearStreams + """
            SELECT split_part(l.android_end_reason, ':', 1) AS label, count(*) AS n
            FROM near JOIN countdown_start_ledger l ON l.stream_id = near.id
            WHERE l.android_ended_at > now() - interval '1 hour' GROUP BY 1 ORDER BY 1
            """, window) {
            counts.androidEndsLastHour[try row.decode("label")] = try row.decode("n")
        }
        counts.remindersSentLastHour = try connection.query(nearStreams + """
            SELECT count(*) AS n FROM near JOIN stream_reminders r ON r.stream_id = near.id
            WHERE r.status = 'sent' AND r.updated_at > now() - interval '1 hour'
            """, window).first?.decode("n", as: Int.self) ?? 0
        return counts
    }

    /// `near`: streams planned from `$1` seconds ago to `$2` seconds ahead, and those rescheduled in the last hour.
    static let nearStreams = """
        WITH near AS (
            SELECT id FROM streams
            WHERE planned_start_at > now() - make_interval(secs => $1::int) AND planned_start_at <= now() + make_interval(secs => $2::int)
            UNION
            SELECT stream_id FROM countdown_planned_start_history WHERE changed_at > now() - interval '1 hour'
        )

        """
}
