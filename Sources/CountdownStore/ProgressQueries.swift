import Foundation
import Postgres

/// `countdown_stream_progress`: for which planned start a stream's start and reminder fan-outs completed.
public enum ProgressQueries {
    /// Records the start fan-outs of `planned` (stream → planned start) as complete.
    public static func markStartsDone(_ planned: [String: Date], on connection: PostgresConnection) throws {
        guard !planned.isEmpty else { return }
        let rows = keyOrdered(planned)
        try connection.execute("""
            INSERT INTO countdown_stream_progress (stream_id, start_done_for)
            SELECT * FROM unnest($1::text[], $2::timestamptz[])
            ON CONFLICT (stream_id) DO UPDATE SET start_done_for = EXCLUDED.start_done_for, updated_at = now()
            """, [PostgresTextArray(rows.map(\.stream)), PostgresTextArray(rows.map(\.planned.postgresText))])
    }

    /// The rows in stream order: two fan-outs that mark overlapping streams at once lock them in the same order,
    /// so they cannot deadlock (a dictionary's order differs between processes).
    static func keyOrdered(_ planned: [String: Date]) -> [(stream: String, planned: Date)] {
        planned.map { (stream: $0.key, planned: $0.value) }.sorted { $0.stream < $1.stream }
    }

    /// Records the reminder fan-out of `stream` as complete for `planned`.
    public static func markRemindersDone(_ stream: String, planned: Date, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO countdown_stream_progress (stream_id, reminder_done_for) VALUES ($1, $2)
            ON CONFLICT (stream_id) DO UPDATE SET reminder_done_for = EXCLUDED.reminder_done_for, updated_at = now()
            """, [stream, planned])
    }

    /// For which planned start the stream's reminder fan-out last completed, and for which one a fan-out that
    /// follows a move runs (`markReminderFollow`).
    public static func reminderProgress(_ stream: String, on connection: PostgresConnection) throws -> (doneFor: Date?, followFor: Date?) {
        let row = try connection.query("""
            SELECT reminder_done_for, reminder_follow_for FROM countdown_stream_progress WHERE stream_id = $1
            """, [stream]).first
        return (try row?.decode("reminder_done_for", as: Date?.self) ?? nil, try row?.decode("reminder_follow_for", as: Date?.self) ?? nil)
    }

    /// Records that the stream's reminder fan-out for `planned` follows a move: it sends to the sent reminders too.
    public static func markReminderFollow(_ stream: String, planned: Date, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO countdown_stream_progress (stream_id, reminder_follow_for) VALUES ($1, $2)
            ON CONFLICT (stream_id) DO UPDATE SET reminder_follow_for = EXCLUDED.reminder_follow_for, updated_at = now()
            """, [stream, planned])
    }

    /// Records that the update push for `planned` went out (unless the start moved again meanwhile).
    public static func markUpdateDone(_ stream: String, planned: Date, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE countdown_stream_progress SET update_pending_for = NULL, updated_at = now()
            WHERE stream_id = $1 AND update_pending_for = $2
            """, [stream, planned])
    }
}
