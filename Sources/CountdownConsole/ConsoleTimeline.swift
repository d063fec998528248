import CountdownDomain
import CountdownMaintenance
import CountdownStore
import Foundation

/// A stream's story as one timeline, pure: everything that happened and is planned, oldest first, undated lines (a
/// device that was never eligible, an update not accepted yet) last. Planned-start moves, every device's start
/// decision (and whether the device can still be reached), updates and ends each countdown accepted or that were
/// refused, reminders, cleared tokens, operator actions with who and why, pauses, queued jobs, the planned start.
public enum ConsoleTimeline {
    /// What the timeline is made of.
    public struct Story: Sendable {
        public var report: StreamReport
        public var history: [ConsoleReadQueries.PlannedStartChange]
        public var invalidations: [ConsoleReadQueries.Invalidation]
        public var accepted: [ConsoleReadQueries.AcceptedState] = []
        public var reminders: [ConsoleReadQueries.ReminderDelivery] = []
        public var actions: [AuditQueries.Entry] = []
    }

    /// Devices whose start went out but whose token was cleared after it (and not restored): they cannot be
    /// reached now. Device id → the clearing.
    public static func unreachable(_ report: StreamReport, invalidations: [ConsoleReadQueries.Invalidation]) -> [String: ConsoleReadQueries.Invalidation] {
        var result: [String: ConsoleReadQueries.Invalidation] = [:]
        for row in report.ledger where row.status == "sent" {
            let sent = row.sentAt ?? row.updatedAt ?? .distantPast
            if let cleared = invalidations.last(where: {
                $0.deviceID == row.deviceID && $0.token != "runtime" && $0.restoredAt == nil && $0.invalidatedAt >= sent
            }) { result[row.deviceID] = cleared }
        }
        return result
    }

    public static func stream(_ story: Story) -> [ConsolePages.TimelineEntry] {
        typealias Entry = ConsolePages.TimelineEntry
        let report = story.report
        var entries: [Entry] = []
        for change in story.history {
            entries.append(Entry(at: change.changedAt, event: "planned start moved",
                                 detail: "\(TimeArgument.format(change.from)) → \(TimeArgument.format(change.to))"))
        }
        let unreachable = unreachable(report, invalidations: story.invalidations)
        let decided = Set(report.ledger.map(\.deviceID))
        for row in report.ledger {
            switch row.status {
            case "sent":
                let reach = unreachable[row.deviceID].map { "; cannot be reached now: its \($0.token) token was cleared (\($0.reason))" } ?? ""
                entries.append(Entry(at: row.sentAt ?? row.updatedAt, event: "start sent", deviceID: row.deviceID, userID: row.userID,
                                     state: unreachable[row.deviceID] == nil ? "accepted" : "unreachable",
                                     detail: "\(row.attempts) attempt(s)" + reach))
            case "skipped", "failed":
                entries.append(Entry(at: row.updatedAt, event: "start \(row.status)", deviceID: row.deviceID, userID: row.userID,
                                     state: row.status == "failed" ? "refused" : "skipped", detail: row.reason ?? "no reason recorded"))
            default:
                entries.append(Entry(at: row.updatedAt, event: "start \(row.status)", deviceID: row.deviceID, userID: row.userID,
                                     state: "pending", detail: "\(row.attempts) attempt(s) so far"))
            }
            if let android = row.android, let ended = android.endedAt {
                entries.append(Entry(at: ended, event: "Android end sent", deviceID: row.deviceID, userID: row.userID,
                                     state: (android.endedReason ?? "").hasPrefix("dead_token") || android.endedReason == "undeliverable" ? "refused" : "accepted",
                                     detail: android.endedReason ?? ""))
            }
        }
        for device in report.devices where !decided.contains(device.deviceID) {
            let detail = device.startEligibility == "eligible" ? "eligible, no start decided yet" : "not eligible: \(device.startEligibility)"
            entries.append(Entry(at: nil, event: "no start", deviceID: device.deviceID, userID: device.userID, detail: detail))
        }
        for session in report.sessions {
            entries.append(Entry(at: session.updatedAt, event: "Live Activity registered", deviceID: session.deviceID, userID: session.userID,
                                 detail: "runtime token \(session.token) (last change)"))
        }
        let open = StreamStatus(rawValue: report.status).map { !$0.isTerminal } ?? false
        for state in story.accepted {
            let what = state.channel == "android_countdown" ? "Android countdown" : "Live Activity"
            let first = state.seq <= 1
            entries.append(Entry(at: state.acceptedAt, event: first ? "\(what) start accepted" : "\(what) update accepted", deviceID: state.deviceID,
                                 state: "accepted", detail: "shows planned start \(TimeArgument.format(state.shownStartAt)) (message \(state.seq))"))
            if open, state.shownStartAt != report.plannedStartAt {
                entries.append(Entry(at: nil, event: "\(what) update pending", deviceID: state.deviceID, state: "pending",
                                     detail: "shows \(TimeArgument.format(state.shownStartAt)), the stream is planned for \(TimeArgument.format(report.plannedStartAt))"))
            }
        }
        for end in report.endDelivery {
            entries.append(Entry(at: end.recordedAt ?? end.firstFailedAt, event: end.state == "retrying" ? "end refused, retrying" : "end given up",
                                 deviceID: end.deviceID, state: end.state == "retrying" ? "pending" : "refused",
                                 detail: "\(end.reason), \(end.attempts) attempt(s)"))
        }
        for reminder in story.reminders {
            entries.append(Entry(at: reminder.sentAt, event: reminder.status == "sent" ? "reminder sent" : "reminder sending",
                                 deviceID: reminder.deviceID, userID: reminder.userID, state: reminder.status == "sent" ? "accepted" : "pending", detail: ""))
        }
        for cleared in story.invalidations {
            entries.append(Entry(at: cleared.invalidatedAt, event: "token cleared", deviceID: cleared.deviceID, state: cleared.restoredAt == nil ? "refused" : nil,
                                 detail: "\(cleared.token) \(cleared.value): \(cleared.reason)"
                                    + (cleared.restoredAt.map { ", restored \(TimeArgument.format($0))" } ?? "")))
        }
        for action in story.actions {
            let event = action.action == "pause" || action.action == "resume" ? "\(action.action) \(action.target)" : "operator: \(action.action)"
            entries.append(Entry(at: action.at, event: event, actor: "\(action.actor) (\(action.role))",
                                 state: String(action.outcome.prefix { $0 != ":" }), detail: "why: \(action.reason) — \(action.outcome)"))
        }
        for job in report.jobs {
            entries.append(Entry(at: job.at, event: "job \(job.state)", state: job.state == "dead" ? "refused" : "pending",
                                 detail: job.id + (job.lastError.isEmpty ? "" : ": \(job.lastError)")))
        }
        if open {
            entries.append(Entry(at: report.startWindowOpensAt, event: "start window opens", detail: "start pushes may go out from here"))
            entries.append(Entry(at: report.plannedStartAt, event: "planned start", detail: report.title))
        }
        return entries.enumerated().sorted { left, right in
            switch (left.element.at, right.element.at) {
            case let (l?, r?) where l != r: l < r
            case (nil, .some): false
            case (.some, nil): true
            default: left.offset < right.offset
            }
        }.map(\.element)
    }
}
