import Postgres

/// Activities that outlive iOS's 8-hour limit before their stream starts (SPEC 10.1, long reschedules): their
/// start-ledger rows are opened again (a new generation, `StartLedger.reopenOutlived`) for a new push-to-start, and
/// their runtime sessions are retired here, so they get an end saying the stream moved (SPEC 12.2) and nothing more.
public enum ActivityLifetimeStore {
    /// Moves the stream's sessions of `devices` to `countdown_retired_sessions` (reason `activity_lifetime`): each
    /// gets an end push saying the stream moved, and to when. Returns how many.
    @discardableResult
    public static func retire(_ stream: String, devices: [String], on connection: PostgresConnection) throws -> Int {
        guard !devices.isEmpty else { return 0 }
        return try connection.execute("""
            WITH gone AS (
                DELETE FROM live_activity_sessions WHERE stream_id = $1 AND device_id = ANY($2::text[])
                RETURNING stream_id, device_id, live_activity_token, user_id)
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
            SELECT stream_id, device_id, live_activity_token, user_id, $3 FROM gone
            ON CONFLICT DO NOTHING
            """, [stream, PostgresTextArray(devices.sorted()), RetiredSessionStore.activityLifetime])
    }
}
