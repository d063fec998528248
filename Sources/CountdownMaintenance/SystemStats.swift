import CountdownDomain
import DelayQueue
import Foundation
import CountdownStore

/// The state of the whole system at a glance, for `countdown-admin stats`.
public struct SystemStats: Sendable, Codable {
    public var delayed, dueNow, leased, dead: Int
    public var oldestLatenessSeconds: Double
    public var jobsByKind: [String: Int]
    public var outboxBacklog: Int
    public var outboxOldestAgeSeconds: Double
    /// Start ledger rows touched in the last hour, by `status` or `status:reason` (of the streams near their start:
    /// `FleetStatsQueries`).
    public var recentStartResults: [String: Int]
    /// The same for Android devices only (their countdown's starts, and why the others got none).
    public var recentAndroidStartResults: [String: Int] = [:]
    /// Android countdowns ended in the last hour, by end reason (`cancelled`, `takeover`, `dead_token`, …).
    public var androidEndsLastHour: [String: Int] = [:]
    public var remindersSentLastHour: Int
    public var streamsByStatus: [String: Int]
    /// Kinds whose claiming is paused (`countdown-admin pause`), as PostgreSQL records them, and the due jobs they hold.
    public var paused: [PauseQueries.Entry] = []
    public var pausedJobs = 0
    /// Kinds paused in Redis that PostgreSQL does not record as paused (a pause made before the pause state moved to
    /// PostgreSQL, or one a worker has not yet lifted).
    public var pausedInRedisOnly: [String] = []

    /// `settings`: the leads of starts and reminders, which bound the streams the last hour's figures read
    /// (`FleetStatsQueries`). Counts jobs by kind without listing them (`DelayQueue.jobCountsByKind`).
    public static func load(database: StoreClient, queue: any DelayQueue, settings: FlowSettings) async throws -> SystemStats {
        let queueStats = try await queue.stats()
        let counted = try await queue.jobCountsByKind()
        var byKind: [String: Int] = [:]
        for kind in CountdownJob.Kind.allCases { byKind[kind.rawValue] = counted[kind.rawValue] ?? 0 }
        let (lateSeconds, lateAtto) = queueStats.oldestDueLateness.components
        let redisPaused = try await queue.pausedKinds().map(\.kind)
        let ahead = max(settings.startLeadSeconds, settings.reminderLeadSeconds) + Int(FlowSettings.earlyTolerance.rounded(.up))
        let (counts, paused) = try await database.withConnection { connection in
            (try FleetStatsQueries.counts(aheadSeconds: ahead, on: connection), try PauseQueries.paused(on: connection))
        }
        var stats = SystemStats(
            delayed: queueStats.delayed, dueNow: queueStats.dueNow, leased: queueStats.leased, dead: queueStats.dead,
            oldestLatenessSeconds: Double(lateSeconds) + Double(lateAtto) / 1e18, jobsByKind: byKind,
            outboxBacklog: counts.outboxBacklog, outboxOldestAgeSeconds: counts.outboxOldestAgeSeconds,
            recentStartResults: counts.recentStartResults, remindersSentLastHour: counts.remindersSentLastHour,
            streamsByStatus: counts.streamsByStatus)
        stats.paused = paused
        stats.recentAndroidStartResults = counts.recentAndroidStartResults
        stats.androidEndsLastHour = counts.androidEndsLastHour
        stats.pausedInRedisOnly = redisPaused.filter { kind in !stats.paused.contains { $0.kind == kind } }
        stats.pausedJobs = queueStats.paused
        return stats
    }
}
