import CountdownDomain
import DelayQueue
import Foundation
import Postgres
import CountdownStore

/// The state of the whole system at a glance, for `countdown-admin stats`.
public struct SystemStats: Sendable, Codable {
    public var delayed, dueNow, leased, dead: Int
    public var oldestLatenessSeconds: Double
    public var jobsByKind: [String: Int]
    public var outboxBacklog: Int
    public var outboxOldestAgeSeconds: Double
    /// Start ledger rows touched in the last hour, by `status` or `status:reason`.
    public var recentStartResults: [String: Int]
    public var remindersSentLastHour: Int
    public var streamsByStatus: [String: Int]
    /// Kinds whose claiming is paused (`countdown-admin pause`), as PostgreSQL records them, and the due jobs they hold.
    public var paused: [PauseStore.Entry] = []
    public var pausedJobs = 0
    /// Kinds paused in Redis that PostgreSQL does not record as paused (a pause made before the pause state moved to
    /// PostgreSQL, or one a worker has not yet lifted).
    public var pausedInRedisOnly: [String] = []

    public static func load(database: PostgresClient, queue: any DelayQueue) async throws -> SystemStats {
        let queueStats = try await queue.stats()
        var byKind: [String: Int] = [:]
        for kind in CountdownJob.Kind.allCases {
            byKind[kind.rawValue] = try await queue.jobIDs(prefix: kind.rawValue + ":", kind: kind.rawValue).count
        }
        let (lateSeconds, lateAtto) = queueStats.oldestDueLateness.components
        let jobsByKind = byKind
        let redisPaused = try await queue.pausedKinds().map(\.kind)
        var stats = try await database.withConnection { connection in
            let outbox = try connection.query("""
                SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM countdown_outbox
                """).first
            var results: [String: Int] = [:]
            for row in try connection.query("""
                SELECT CASE WHEN status IN ('sent', 'pending', 'sending') THEN status
                            ELSE status || ':' || coalesce(split_part(reason, ':', 1), '') END AS label, count(*) AS n
                FROM countdown_start_ledger WHERE updated_at > now() - interval '1 hour' GROUP BY 1 ORDER BY 1
                """) {
                results[try row.decode("label")] = try row.decode("n")
            }
            var streams: [String: Int] = [:]
            for row in try connection.query("SELECT status, count(*) AS n FROM streams GROUP BY status") {
                streams[try row.decode("status")] = try row.decode("n")
            }
            let reminders = try connection.query("""
                SELECT count(*) AS n FROM stream_reminders WHERE status = 'sent' AND updated_at > now() - interval '1 hour'
                """).first?.decode("n", as: Int.self) ?? 0
            let paused = try PauseStore.paused(on: connection)
            var stats = SystemStats(
                delayed: queueStats.delayed, dueNow: queueStats.dueNow, leased: queueStats.leased, dead: queueStats.dead,
                oldestLatenessSeconds: Double(lateSeconds) + Double(lateAtto) / 1e18, jobsByKind: jobsByKind,
                outboxBacklog: try outbox?.decode("n") ?? 0, outboxOldestAgeSeconds: try outbox?.decode("age") ?? 0,
                recentStartResults: results, remindersSentLastHour: reminders, streamsByStatus: streams)
            stats.paused = paused
            return stats
        }
        stats.pausedInRedisOnly = redisPaused.filter { kind in !stats.paused.contains { $0.kind == kind } }
        stats.pausedJobs = queueStats.paused
        return stats
    }
}
