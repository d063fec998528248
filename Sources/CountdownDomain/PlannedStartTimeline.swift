import Foundation

/// A stream's planned start over time: its recorded moves (`countdown_planned_start_history`, oldest first) and the
/// current value. Tells which planned start a push-to-start (or an Android start) carried from when it was accepted,
/// so the start counts as what its countdown shows (SPEC 12.2). Pure.
public struct PlannedStartTimeline: Sendable, Equatable {
    /// One change of the planned start, at the writer's transaction time.
    public struct Move: Sendable, Equatable {
        public var at: Date
        public var old: Date
        public var new: Date

        public init(at: Date, old: Date, new: Date) {
            self.at = at
            self.old = old
            self.new = new
        }
    }

    /// Recorded moves, oldest first.
    public var moves: [Move]
    /// The planned start now.
    public var current: Date
    /// Up to this instant the planned start is not known (moves made before the history was kept, or older than the
    /// moves loaded); nil: every move is in `moves`.
    public var knownAfter: Date?

    public init(moves: [Move], current: Date, knownAfter: Date? = nil) {
        self.moves = moves.sorted { $0.at < $1.at }
        self.current = current
        self.knownAfter = knownAfter
    }

    /// A stream that never moved.
    public static func unmoved(_ current: Date) -> PlannedStartTimeline { PlannedStartTimeline(moves: [], current: current) }

    /// The planned start a push carried that was built no earlier than `builtAfter` and accepted by `acceptedAt`:
    /// the value in force over that whole interval, or nil when the planned start moved inside it (either value may
    /// have gone out) or the interval reaches back to `knownAfter`.
    public func carried(builtAfter: Date, acceptedAt: Date) -> Date? {
        let from = min(builtAfter, acceptedAt)
        if let knownAfter, from <= knownAfter { return nil }
        if moves.contains(where: { $0.at > from && $0.at <= acceptedAt }) { return nil }
        if let last = moves.last(where: { $0.at <= acceptedAt }) { return last.new }
        return moves.first?.old ?? current
    }

    /// The latest planned start in force at any time since `since`: the one then, and every one it moved to after (a
    /// move at `since` counts). A countdown started then may show any of them: one whose device missed the update
    /// moving the start earlier still shows the later one. Moves not loaded (before `knownAfter`) are not counted.
    public func latest(since: Date) -> Date {
        moves.filter { $0.at >= since }.reduce(current) { max($0, $1.old, $1.new) }
    }

    /// What a start accepted at `sentAt` carried: built at most `buildMargin` before it was recorded, or at any time
    /// since `firstAttemptAfter` when it may have gone out more than once (a resend after a crash: the device applies
    /// whichever arrived first).
    public func carriedByStart(sentAt: Date, buildMargin: TimeInterval, firstAttemptAfter: Date? = nil) -> Date? {
        let earliest = sentAt.addingTimeInterval(-buildMargin)
        return carried(builtAfter: firstAttemptAfter.map { min($0, earliest) } ?? earliest, acceptedAt: sentAt)
    }
}
