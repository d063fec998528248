import Postgres

/// `live_activity_sessions` and the end claims that make each session's end push go out once.
public enum SessionStore {
    /// A runtime session with what its push needs.
    public struct Session: Sendable {
        public var device: String
        public var activityToken: String
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
        public var user: String?
    }

    /// Claims the stream's sessions (or `device`'s) for `seconds` where no other sender holds them; returns the
    /// claimed devices. The sessions are key-share locked (in key order) before the claims are written: a session
    /// another end job is deleting is waited for and then skipped, never a foreign-key error.
    public static func claimEnds(_ stream: String, device: String?, seconds: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            INSERT INTO countdown_session_end_claims (stream_id, device_id, claimed_until)
            SELECT stream_id, device_id, now() + make_interval(secs => $2) FROM (
                SELECT stream_id, device_id FROM live_activity_sessions
                WHERE stream_id = $1 AND ($3::text IS NULL OR device_id = $3)
                ORDER BY device_id FOR KEY SHARE
            ) AS live
            ON CONFLICT (stream_id, device_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
                WHERE countdown_session_end_claims.claimed_until < now()
            RETURNING device_id
            """, [stream, seconds, device]).map { try $0.decode("device_id", as: String.self) }
    }

    /// How many sessions the stream (or `device`) has.
    public static func count(_ stream: String, device: String?, on connection: PostgresConnection) throws -> Int {
        try connection.query(
            "SELECT count(*) AS n FROM live_activity_sessions WHERE stream_id = $1 AND ($2::text IS NULL OR device_id = $2)",
            [stream, device]).first?.decode("n", as: Int.self) ?? 0
    }

    /// Sessions of the stream (only `devices`' when given); an empty FCM token reads as absent.
    public static func sessions(_ stream: String, devices: [String]?, on connection: PostgresConnection) throws -> [Session] {
        if devices?.isEmpty == true { return [] }
        return try connection.query("""
            SELECT s.device_id, s.live_activity_token, nullif(d.fcm_token, '') AS fcm_token, d.locale AS locale, u.locale AS user_locale,
                   coalesce(s.user_id, d.user_id) AS user_id
            FROM live_activity_sessions s
            JOIN devices d ON d.device_id = s.device_id
            LEFT JOIN users u ON u.id = coalesce(s.user_id, d.user_id)
            WHERE s.stream_id = $1 AND ($2::text[] IS NULL OR s.device_id = ANY($2::text[]))
            """, [stream, devices.map { PostgresTextArray($0) }]).map { row in
            Session(device: try row.decode("device_id"), activityToken: try row.decode("live_activity_token"),
                    fcmToken: try row.decode("fcm_token"), locale: try row.decode("locale"), userLocale: try row.decode("user_locale"),
                    user: try row.decode("user_id"))
        }
    }

    /// Deletes the sessions still holding the token they were pushed to (a re-registered session stays).
    @discardableResult
    public static func delete(_ stream: String, _ sessions: [Session], on connection: PostgresConnection) throws -> Int {
        guard !sessions.isEmpty else { return 0 }
        return try connection.execute("""
            DELETE FROM live_activity_sessions s
            USING unnest($2::text[], $3::text[]) AS t(device_id, token)
            WHERE s.stream_id = $1 AND s.device_id = t.device_id AND s.live_activity_token = t.token
            """, [stream, PostgresTextArray(sessions.map(\.device)), PostgresTextArray(sessions.map(\.activityToken))])
    }

    /// Releases end claims (to be retried, or re-registered with a new token meanwhile).
    public static func releaseEndClaims(_ stream: String, devices: [String], on connection: PostgresConnection) throws {
        try connection.execute(
            "DELETE FROM countdown_session_end_claims WHERE stream_id = $1 AND device_id = ANY($2::text[])",
            [stream, PostgresTextArray(devices)])
    }
}
