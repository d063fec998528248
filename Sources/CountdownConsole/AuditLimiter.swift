import Foundation
import Synchronization

/// Keeps one user from flooding `countdown_audit`: at most `perMinute` audited actions per user and clock minute.
/// Past it, an action is refused without doing or auditing it one by one; the refusals of a user's minute are summed
/// in one audit row, written at the first and updated after.
public final class AuditLimiter: Sendable {
    /// What to do with one action.
    public enum Decision: Sendable, Equatable {
        /// Audit it (and, when allowed, do it).
        case admit
        /// Refuse it: the `count`th refusal of `user` in this minute. `insertSummary` for the first (write the summary
        /// row); later ones update `summaryRow` when it is known.
        case refuse(count: Int, insertSummary: Bool, summaryRow: Int?)
    }

    /// Audited actions a user may make per minute.
    public let perMinute: Int
    private let now: @Sendable () -> Date
    private let state = Mutex<[String: Window]>([:])

    private struct Window {
        var minute: Int64
        var admitted = 0
        var refused = 0
        var summaryRow: Int?
    }

    public init(perMinute: Int = 30, now: @escaping @Sendable () -> Date = Date.init) {
        self.perMinute = perMinute
        self.now = now
    }

    /// The decision for one action of `user`, counted.
    public func decide(for user: String) -> Decision {
        let minute = Self.minute(of: now())
        return state.withLock { windows in
            windows = windows.filter { $0.value.minute == minute }
            var window = windows[user] ?? Window(minute: minute)
            defer { windows[user] = window }
            if window.admitted < perMinute {
                window.admitted += 1
                return .admit
            }
            window.refused += 1
            return .refuse(count: window.refused, insertSummary: window.refused == 1, summaryRow: window.summaryRow)
        }
    }

    /// Remembers the summary row written for `user`'s refusals this minute.
    public func summaryWritten(for user: String, row: Int) {
        let minute = Self.minute(of: now())
        state.withLock { windows in
            if windows[user]?.minute == minute { windows[user]?.summaryRow = row }
        }
    }

    /// Refusals counted for `user` this minute (the summary row's latest figure).
    public func refusals(of user: String) -> Int {
        let minute = Self.minute(of: now())
        return state.withLock { windows in windows[user].map { $0.minute == minute ? $0.refused : 0 } ?? 0 }
    }

    /// The start of the minute of `date`, as `HH:MM` in UTC.
    public func minuteLabel() -> String {
        let seconds = Int64(now().timeIntervalSince1970.rounded(.down))
        let ofDay = ((seconds % 86_400) + 86_400) % 86_400
        return String(format: "%02d:%02d", ofDay / 3600, (ofDay % 3600) / 60)
    }

    static func minute(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 60).rounded(.down))
    }
}
