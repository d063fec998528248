import CountdownDomain
import Foundation
import Postgres

/// Reads `countdown_planned_start_history` (every move of a stream's planned start, written by a trigger) as a
/// `PlannedStartTimeline`: which planned start a push accepted at a given time carried.
public enum PlannedStartHistoryQueries {
    /// The most moves of one stream read; older ones leave the timeline unknown before the oldest read.
    public static let movesRead = 200

    /// The stream's timeline. `current` is its planned start now, read in the same transaction. Moves older than the
    /// history (the progress row's `planned_changed_at` is later than the last recorded move) or past `movesRead`
    /// make the times before them unknown.
    public static func timeline(_ stream: String, current: Date, on connection: PostgresConnection) throws -> PlannedStartTimeline {
        let moves = try connection.query("""
            SELECT old_planned_start_at, new_planned_start_at, changed_at FROM countdown_planned_start_history
            WHERE stream_id = $1 ORDER BY changed_at DESC, id DESC LIMIT $2
            """, [stream, movesRead + 1]).map { row in
            PlannedStartTimeline.Move(at: try row.decode("changed_at"), old: try row.decode("old_planned_start_at"),
                                      new: try row.decode("new_planned_start_at"))
        }
        let lastMovedAt = try connection.query("SELECT planned_changed_at FROM countdown_stream_progress WHERE stream_id = $1", [stream])
            .first?.decode("planned_changed_at", as: Date?.self) ?? nil
        var knownAfter: Date?
        if moves.count > movesRead { knownAfter = moves[movesRead - 1].at }
        if let lastMovedAt, lastMovedAt > (moves.first?.at ?? .distantPast) { knownAfter = lastMovedAt }
        return PlannedStartTimeline(moves: Array(moves.prefix(movesRead)), current: current, knownAfter: knownAfter)
    }
}
