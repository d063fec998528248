import CountdownMaintenance
import CountdownStore
import Foundation

/// A stream's story as one timeline, pure: reschedules, every device's start decision (sent when, or skipped and
/// why), sessions, end deliveries, cleared tokens and queued jobs, oldest first; undated lines (a device that was
/// never eligible) last.
public enum ConsoleTimeline {
    public static func stream(_ report: StreamReport, history: [ConsoleReadStore.PlannedStartChange],
                              invalidations: [ConsoleReadStore.Invalidation]) -> [ConsolePages.TimelineEntry] {
        typealias Entry = ConsolePages.TimelineEntry
        var entries: [Entry] = []
        for change in history {
            entries.append(Entry(at: change.changedAt, event: "rescheduled", deviceID: nil,
                                 detail: "planned start \(RFC3339Text.format(change.from)) → \(RFC3339Text.format(change.to))"))
        }
        let decided = Set(report.ledger.map(\.deviceID))
        for row in report.ledger {
            switch row.status {
            case "sent":
                entries.append(Entry(at: row.sentAt ?? row.updatedAt, event: "start sent", deviceID: row.deviceID,
                                     detail: "user \(row.userID), \(row.attempts) attempt(s)"))
            case "skipped", "failed":
                entries.append(Entry(at: row.updatedAt, event: "start \(row.status)", deviceID: row.deviceID,
                                     detail: "user \(row.userID): \(row.reason ?? "no reason recorded")"))
            default:
                entries.append(Entry(at: row.updatedAt, event: "start \(row.status)", deviceID: row.deviceID,
                                     detail: "user \(row.userID), \(row.attempts) attempt(s) so far"))
            }
        }
        for device in report.devices where !decided.contains(device.deviceID) {
            let detail = device.startEligibility == "eligible"
                ? "user \(device.userID): eligible, no start decided yet"
                : "user \(device.userID): not eligible: \(device.startEligibility)"
            entries.append(Entry(at: nil, event: "no start", deviceID: device.deviceID, detail: detail))
        }
        for session in report.sessions {
            entries.append(Entry(at: session.updatedAt, event: "session", deviceID: session.deviceID,
                                 detail: "runtime token \(session.token) (last change)"))
        }
        for end in report.endDelivery {
            entries.append(Entry(at: end.recordedAt ?? end.firstFailedAt, event: "end \(end.state)", deviceID: end.deviceID,
                                 detail: "\(end.reason), \(end.attempts) attempt(s)"))
        }
        for cleared in invalidations {
            entries.append(Entry(at: cleared.invalidatedAt, event: "token cleared", deviceID: cleared.deviceID,
                                 detail: "\(cleared.token) \(cleared.value): \(cleared.reason)"
                                    + (cleared.restoredAt.map { ", restored \(RFC3339Text.format($0))" } ?? "")))
        }
        for job in report.jobs {
            entries.append(Entry(at: job.at, event: "job \(job.state)", deviceID: nil,
                                 detail: job.id + (job.lastError.isEmpty ? "" : ": \(job.lastError)")))
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

/// Times as the console shows them: RFC 3339 in UTC, as countdown-admin prints them.
public enum RFC3339Text {
    public static func format(_ date: Date) -> String { TimeArgument.format(date) }

    public static func format(_ date: Date?) -> String { date.map(TimeArgument.format) ?? "—" }
}
