import Foundation
import Postgres

extension StreamQueries {
    /// A stream locked for a command (`FOR UPDATE`), with what the command reports.
    public struct CommandRow: Sendable, Equatable {
        public var status: String
        /// Runtime sessions of the stream and its Android countdowns showing or being started (each gets an end push
        /// when the stream ends).
        public var sessions: Int
        /// Reminders still `active`.
        public var activeReminders: Int
        /// PostgreSQL's `now()`: the command's clock.
        public var now: Date
    }

    /// Locks the stream's row until the transaction ends; nil when there is no such stream.
    public static func lockForCommand(_ stream: String, on connection: PostgresConnection) throws -> CommandRow? {
        guard let row = try connection.query("""
            SELECT s.status, now() AS now,
                   (SELECT count(*) FROM live_activity_sessions WHERE stream_id = s.id)
                   + (SELECT count(*) FROM countdown_activity_sessions WHERE stream_id = s.id)
                   + (SELECT count(*) \(AndroidCountdownQueries.liveRows)) AS sessions,
                   (SELECT count(*) FROM stream_reminders WHERE stream_id = s.id AND status = 'active') AS reminders
            FROM streams s WHERE s.id = $1 FOR UPDATE OF s
            """, [stream]).first else { return nil }
        return CommandRow(status: try row.decode("status"), sessions: try row.decode("sessions"),
                          activeReminders: try row.decode("reminders"), now: try row.decode("now"))
    }

    /// Sets the status (the trigger cancels active reminders on `cancelled` and records the change for the relay).
    public static func setStatus(_ stream: String, to status: String, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE streams SET status = $2 WHERE id = $1", [stream, status])
    }

    /// Moves the planned start (the trigger records the change for the relay).
    public static func setPlannedStart(_ stream: String, to plannedStartAt: Date, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE streams SET planned_start_at = $2 WHERE id = $1", [stream, plannedStartAt])
    }
}
