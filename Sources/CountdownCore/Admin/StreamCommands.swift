import Postgres

/// Stream changes shared by `countdown-admin` and `countdown-api`. They only write rows: the schema's
/// triggers record the change in the outbox (and cancel active reminders), and the workers do the rest.
public enum StreamCommands {
    /// What a cancel did.
    public struct CancelReport: Sendable, Equatable {
        /// Reminders that were `active` and are now `cancelled`.
        public var remindersCancelled: Int
        /// Runtime sessions that will get an end push.
        public var sessionsToEnd: Int

        public init(remindersCancelled: Int, sessionsToEnd: Int) {
            self.remindersCancelled = remindersCancelled
            self.sessionsToEnd = sessionsToEnd
        }
    }

    public enum CancelOutcome: Sendable, Equatable {
        case cancelled(CancelReport)
        /// No stream has this id.
        case notFound
        /// The stream is already `ready`, `started`, `cancelled` or `expired`.
        case alreadyEnded(StreamStatus)
    }

    /// Sets a scheduled stream `cancelled` in one transaction (the row is locked first, so two cancels never
    /// both succeed). The workers then remove its pre-start jobs and send end pushes to its sessions.
    public static func cancel(_ streamID: String, database: PostgresClient) async throws -> CancelOutcome {
        try await database.transaction { connection in
            guard let row = try connection.query("SELECT status FROM streams WHERE id = $1 FOR UPDATE", [streamID]).first else {
                return .notFound
            }
            let raw = try row.decode("status", as: String.self)
            guard let status = StreamStatus(rawValue: raw) else {
                throw PostgresError(code: .decodeFailed, what: "read the status of stream \(streamID)", message: "unknown status \"\(raw)\"")
            }
            if status.isTerminal { return .alreadyEnded(status) }
            let counts = try connection.query("""
                SELECT (SELECT count(*) FROM stream_reminders WHERE stream_id = $1 AND status = 'active') AS reminders,
                       (SELECT count(*) FROM live_activity_sessions WHERE stream_id = $1) AS sessions
                """, [streamID]).first
            try connection.execute("UPDATE streams SET status = 'cancelled' WHERE id = $1", [streamID])
            return .cancelled(CancelReport(
                remindersCancelled: try counts?.decode("reminders", as: Int.self) ?? 0,
                sessionsToEnd: try counts?.decode("sessions", as: Int.self) ?? 0))
        }
    }
}
