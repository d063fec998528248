import Foundation
import Postgres

/// Activities that outlive iOS's 8-hour limit before their stream starts (SPEC 10.1, long reschedules): their
/// start-ledger rows are opened again (a new generation) for a new push-to-start, and their runtime sessions are
/// retired, so they get an end saying the stream moved (SPEC 12.2) and nothing more.
public enum ActivityLifetimeStore {
    /// Opens again, as the next generation, the `sent` ledger rows of `streams` whose push-to-start went out more
    /// than `lifetimeSeconds` before the stream's planned start (`StartLedgerMachine`'s `outlived` transition), and retires those devices' sessions of the stream
    /// (reason `activity_lifetime`). Rows of Android devices are left alone: the Android countdown has no 8-hour life and
    /// is started once per device and stream (SPEC 10.4, round 3). Returns the (stream, device) pairs reopened.
    @discardableResult
    public static func reopenOutlived(_ streams: [String], lifetimeSeconds: Int, on connection: PostgresConnection) throws
        -> [(stream: String, device: String)] {
        guard !streams.isEmpty else { return [] }
        let reopened = try connection.query("""
            UPDATE countdown_start_ledger l SET status = 'pending', generation = l.generation + 1, reason = NULL, claimed_by = NULL,
                claimed_until = NULL, updated_at = now()
            FROM streams s
            WHERE l.stream_id = ANY($1::text[]) AND s.id = l.stream_id AND l.status = 'sent'
              AND l.sent_at < s.planned_start_at - make_interval(secs => $2)
              AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.device_id = l.device_id AND d.platform = 'android')
            RETURNING l.stream_id, l.device_id
            """, [PostgresTextArray(streams.sorted()), lifetimeSeconds]).map { row in
            (stream: try row.decode("stream_id", as: String.self), device: try row.decode("device_id", as: String.self))
        }
        for stream in Set(reopened.map(\.stream)).sorted() {
            try retire(stream, devices: reopened.filter { $0.stream == stream }.map(\.device), on: connection)
        }
        return reopened
    }

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
