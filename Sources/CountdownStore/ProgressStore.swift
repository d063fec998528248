import Foundation
import Postgres

/// `countdown_stream_progress`: for which planned start a stream's start and reminder fan-outs completed.
public enum ProgressStore {
    /// Records the start fan-outs of `planned` (stream → planned start) as complete.
    public static func markStartsDone(_ planned: [String: Date], on connection: PostgresConnection) throws {
        guard !planned.isEmpty else { return }
        try connection.execute("""
            INSERT INTO countdown_stream_progress (stream_id, start_done_for)
            SELECT * FROM unnest($1::text[], $2::timestamptz[])
            ON CONFLICT (stream_id) DO UPDATE SET start_done_for = EXCLUDED.start_done_for, updated_at = now()
            """, [PostgresTextArray(Array(planned.keys)), PostgresTextArray(planned.values.map(\.postgresText))])
    }

    /// Records the reminder fan-out of `stream` as complete for `planned`.
    public static func markRemindersDone(_ stream: String, planned: Date, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO countdown_stream_progress (stream_id, reminder_done_for) VALUES ($1, $2)
            ON CONFLICT (stream_id) DO UPDATE SET reminder_done_for = EXCLUDED.reminder_done_for, updated_at = now()
            """, [stream, planned])
    }
}
