import Foundation

/// The fleet page's first line: healthy, degraded or paused, and why.
public struct FleetVerdict: Sendable, Codable, Equatable {
    /// `healthy`, `degraded` or `paused`.
    public var state: String
    public var reasons: [String]

    /// Lateness past which the queue counts as behind.
    static let lateAfterSeconds = 60.0

    /// The verdict of a fleet page: paused when any kind is paused (and anything else wrong is listed too), degraded
    /// when no worker beats, the token guard tripped, jobs are late or dead, rows are quarantined or the outbox lags.
    static func of(_ page: ConsolePages.Fleet) -> FleetVerdict {
        let stats = page.stats
        var problems: [String] = []
        if let workers = page.workers, !workers.contains(where: \.alive) { problems.append("no worker is alive: nothing is claiming jobs") }
        if page.tokenGuard?.tripped == true { problems.append("the token guard tripped: refused tokens are not being cleared") }
        if stats.oldestLatenessSeconds > lateAfterSeconds {
            problems.append(String(format: "the oldest due job is %.0f s late", stats.oldestLatenessSeconds))
        }
        if stats.dead > 0 { problems.append("\(stats.dead) dead letter(s) wait for an operator") }
        if page.quarantined > 0 { problems.append("\(page.quarantined) row(s) quarantined") }
        if stats.outboxOldestAgeSeconds > lateAfterSeconds {
            problems.append(String(format: "the outbox's oldest row is %.0f s old", stats.outboxOldestAgeSeconds))
        }
        let pauses = page.paused.map { "\($0.kind) paused by \($0.actor): \($0.reason)" }
        if !pauses.isEmpty { return FleetVerdict(state: "paused", reasons: pauses + problems) }
        return problems.isEmpty ? FleetVerdict(state: "healthy", reasons: ["jobs are on time, workers beat, nothing is paused, dead or quarantined"])
            : FleetVerdict(state: "degraded", reasons: problems)
    }
}
