import Configuration
import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation

/// Human-readable renderings of the admin reports.
enum AdminText {
    static func stream(_ report: StreamReport) -> String {
        let now = report.databaseNow
        var lines = [
            "stream \(report.id): \"\(report.title)\"",
            "  status:        \(report.status)",
            "  planned start: \(AdminOutput.time(report.plannedStartAt)) (\(AdminOutput.relative(report.plannedStartAt, to: now)))",
            "  start window:  opens \(AdminOutput.time(report.startWindowOpensAt)) (\(AdminOutput.relative(report.startWindowOpensAt, to: now)))",
            "",
            "participants:",
            AdminOutput.table(["USER", "NAME", "ROLE", "POSITION"], report.participants.map { [$0.userID, $0.name, $0.role, String($0.position)] }),
            "",
            "devices (would a start push go out now?):",
            AdminOutput.table(["USER", "DEVICE", "PLATFORM", "START"], report.devices.map { [$0.userID, $0.deviceID, $0.platform, $0.startEligibility] }),
            "",
            "pending jobs:",
            AdminOutput.table(["JOB", "STATE", "WHEN", "ATTEMPTS", "LAST ERROR"], report.jobs.map {
                [$0.id, $0.state, $0.at.map { AdminOutput.relative($0, to: now) } ?? "—", String($0.attempts), String($0.lastError.prefix(60))]
            }),
            "",
            "start ledger (one start per stream, user and device, ever; on Android the countdown's messages since):",
            AdminOutput.table(["USER", "DEVICE", "STATUS", "WHY", "ATTEMPTS", "SENT", "PLATFORM", "COUNTDOWN"], report.ledger.map {
                [$0.userID, $0.deviceID, $0.status, $0.reason ?? "", String($0.attempts), AdminOutput.time($0.sentAt), $0.platform ?? "—",
                 androidCountdown($0.android)]
            }),
            "",
            "runtime sessions (end pushes go here):",
            AdminOutput.table(["DEVICE", "USER", "TOKEN", "UPDATED"], report.sessions.map { [$0.deviceID, $0.userID ?? "—", $0.token, AdminOutput.time($0.updatedAt)] }),
            "",
            "reminders:",
            AdminOutput.table(["USER", "STATUS"], report.reminders.map { [$0.userID, $0.status] }),
        ]
        if !report.endDelivery.isEmpty {
            lines += ["", "end pushes not delivered (retried until the dismissal window closes, then undeliverable):",
                      AdminOutput.table(["DEVICE", "STATE", "REASON", "ATTEMPTS", "FIRST FAILED", "RECORDED"], report.endDelivery.map {
                          [$0.deviceID, $0.state, $0.reason, String($0.attempts), AdminOutput.time($0.firstFailedAt), AdminOutput.time($0.recordedAt)]
                      })]
        }
        if report.ledger.isEmpty && report.status == "scheduled" {
            lines.append("\nno start pushes yet: they go out when the start window opens")
        }
        return lines.joined(separator: "\n")
    }

    /// `showing/seq=2` or `ended:cancelled/seq=3` for an Android countdown, `—` otherwise.
    static func androidCountdown(_ countdown: StreamReport.AndroidCountdown?) -> String {
        guard let countdown else { return "—" }
        return (countdown.endedAt == nil ? "showing" : "ended:\(countdown.endedReason ?? "")") + "/seq=\(countdown.seq)"
    }

    static func stats(_ stats: SystemStats) -> String {
        func pairs(_ values: [String: Int]) -> String {
            values.isEmpty ? "none" : values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return """
            queue:    delayed \(stats.delayed), due now \(stats.dueNow), running \(stats.leased), dead \(stats.dead)
            lateness: oldest due job is \(String(format: "%.3f", stats.oldestLatenessSeconds)) s late
            jobs:     \(pairs(stats.jobsByKind.filter { $0.value > 0 }))
            outbox:   \(stats.outboxBacklog) row(s) waiting, oldest \(String(format: "%.1f", stats.outboxOldestAgeSeconds)) s
            streams:  \(pairs(stats.streamsByStatus))
            starts in the last hour:    \(pairs(stats.recentStartResults))
            android starts in the last hour: \(pairs(stats.recentAndroidStartResults))
            android countdowns ended in the last hour: \(pairs(stats.androidEndsLastHour))
            reminders sent in the last hour: \(stats.remindersSentLastHour)
            paused:   \(stats.paused.isEmpty ? "nothing" : stats.paused.map { "\($0.kind) since \(TimeArgument.format($0.since)) by \($0.actor)"
                + ($0.reason.isEmpty ? "" : " (\($0.reason))") }.joined(separator: ", ") + "; \(stats.pausedJobs) due job(s) held")
            """ + (stats.pausedInRedisOnly.isEmpty ? "" : """

            paused in Redis only (not recorded in PostgreSQL; `resume` lifts it): \(stats.pausedInRedisOnly.joined(separator: ", "))
            """)
    }

    static func reconcile(_ report: Reconciler.Report) -> String {
        func pairs(_ values: [String: Int]) -> String {
            values.isEmpty ? "none" : values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        let verb = report.dryRun ? "would be" : "were"
        return """
            checked \(report.streamsChecked) stream(s)\(report.dryRun ? " (dry run: nothing changed)" : "")
              jobs that \(verb) added:     \(pairs(report.added))
              due times that \(verb) fixed: \(pairs(report.corrected))
              stale jobs that \(verb) removed: \(pairs(report.removed))
            """ + (report.remindersLeftToPages.isEmpty ? "" : """

              reminders left to their queued or running pages: \(report.remindersLeftToPages.joined(separator: " "))
            """) + (report.quarantined.isEmpty ? "" : """

              streams that cannot be read or planned (\(report.dryRun ? "not quarantined in a dry run" : "quarantined")): \(report.quarantined.joined(separator: " "))
            """)
    }
}

/// A progress bar on a terminal, plain lines otherwise (on stderr, so `--json` stdout stays clean).
final class ProgressLine: Sendable {
    private let enabled: Bool
    private let terminal: Bool

    init(enabled: Bool) {
        self.enabled = enabled
        terminal = isatty(STDERR_FILENO) == 1
    }

    func update(_ done: Int, _ total: Int) {
        guard enabled else { return }
        let width = 30
        let filled = total == 0 ? width : min(width, done * width / max(total, 1))
        let line = "[\(String(repeating: "#", count: filled))\(String(repeating: "-", count: width - filled))] \(done)/\(total) streams"
        FileHandle.standardError.write(Data((terminal ? "\r" + line : line + "\n").utf8))
    }

    func finish() {
        if enabled && terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
