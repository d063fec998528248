import Postgres

/// Runtime sessions and the end claims that make each session's end push go out once. A device's sessions of a
/// stream are its row in `live_activity_sessions` (the newest activity) and the older activities kept in
/// `countdown_activity_sessions` (SPEC 12.1); each gets the updates and the end. End claims are per device: a
/// claim covers every activity of the device.
public enum SessionQueries {
    /// A runtime session (one activity) with what its push needs.
    public struct Session: Sendable {
        public var device: String
        /// The activity's id as registered ('' when it was registered without one): with `device`, the key of the
        /// activity's end attempts and update records.
        public var activity: String = ""
        public var activityToken: String
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
        public var user: String?
    }

    /// Claims the stream's sessions (or `device`'s) for `seconds` for `owner` where no other sender holds them
    /// (a claim that expired, or is held by one of `deadOwners`, is taken over); returns the claimed devices. The
    /// sessions are key-share locked (in key order) before the claims are written: a session another end job is
    /// deleting is waited for and then skipped, never a foreign-key error.
    public static func claimEnds(_ stream: String, device: String?, seconds: Int, owner: String? = nil, deadOwners: [String] = [],
                                 on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            INSERT INTO countdown_session_end_claims (stream_id, device_id, claimed_until, claimed_by)
            SELECT stream_id, device_id, now() + make_interval(secs => $2), $4 FROM (
                SELECT stream_id, device_id FROM live_activity_sessions
                WHERE stream_id = $1 AND ($3::text IS NULL OR device_id = $3)
                ORDER BY device_id FOR KEY SHARE
            ) AS live
            ON CONFLICT (stream_id, device_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until, claimed_by = EXCLUDED.claimed_by
                WHERE countdown_session_end_claims.claimed_until < now() OR countdown_session_end_claims.claimed_by = ANY($5::text[])
            RETURNING device_id
            """, [stream, seconds, device, owner, PostgresTextArray(deadOwners)]).map { try $0.decode("device_id", as: String.self) }
    }

    /// The workers (other than `except`) holding unexpired end claims on the stream's sessions.
    public static func endClaimOwners(_ stream: String, except: String?, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT DISTINCT claimed_by FROM countdown_session_end_claims
            WHERE stream_id = $1 AND claimed_until >= now() AND claimed_by IS NOT NULL AND claimed_by IS DISTINCT FROM $2
            """, [stream, except]).map { try $0.decode("claimed_by", as: String.self) }
    }

    /// How many sessions the stream (or `device`) has, and in how many seconds the earliest `Retry-After` hold
    /// (`EndDeliveryQueries.hold`) on them ends (nil when none is held); the caller's own `claimed` devices are not holds (an
    /// anonymous worker's claims are owner-less too).
    public static func count(_ stream: String, device: String?, claimed: [String] = [], on connection: PostgresConnection) throws
        -> (sessions: Int, heldFor: Double?) {
        let row = try connection.query("""
            SELECT (SELECT count(*) FROM live_activity_sessions WHERE stream_id = $1 AND ($2::text IS NULL OR device_id = $2)) AS n,
                   (SELECT extract(epoch FROM min(claimed_until) - now())::float8 FROM countdown_session_end_claims
                    WHERE stream_id = $1 AND ($2::text IS NULL OR device_id = $2) AND claimed_by IS NULL AND claimed_until >= now()
                      AND NOT (device_id = ANY($3::text[]))) AS seconds
            """, [stream, device, PostgresTextArray(claimed)]).first
        return (try row?.decode("n", as: Int.self) ?? 0, try row?.decode("seconds", as: Double?.self) ?? nil)
    }

    /// Sessions of the stream (only `devices`' when given); an empty FCM token reads as absent.
    public static func sessions(_ stream: String, devices: [String]?, on connection: PostgresConnection) throws -> [Session] {
        if devices?.isEmpty == true { return [] }
        return try connection.query("""
            SELECT s.device_id, s.activity_id, s.live_activity_token, nullif(d.fcm_token, '') AS fcm_token, d.locale AS locale,
                   u.locale AS user_locale, coalesce(s.user_id, d.user_id) AS user_id
            FROM (SELECT device_id, coalesce(activity_id, '') AS activity_id, live_activity_token, user_id FROM live_activity_sessions
                  WHERE stream_id = $1 AND ($2::text[] IS NULL OR device_id = ANY($2::text[]))
                  UNION ALL
                  SELECT device_id, activity_id, live_activity_token, user_id FROM countdown_activity_sessions
                  WHERE stream_id = $1 AND ($2::text[] IS NULL OR device_id = ANY($2::text[]))) s
            JOIN devices d ON d.device_id = s.device_id
            LEFT JOIN users u ON u.id = coalesce(s.user_id, d.user_id)
            """, [stream, devices.map { PostgresTextArray($0) }]).map { row in
            Session(device: try row.decode("device_id"), activity: try row.decode("activity_id"), activityToken: try row.decode("live_activity_token"),
                    fcmToken: try row.decode("fcm_token"), locale: try row.decode("locale"), userLocale: try row.decode("user_locale"),
                    user: try row.decode("user_id"))
        }
    }

    /// Deletes the sessions still holding the token they were pushed to (a re-registered session stays). Where
    /// the device's newest activity goes and an older one is left, the newest older one takes its place in
    /// `live_activity_sessions` (the row, and so the device's end claim, stays).
    @discardableResult
    public static func delete(_ stream: String, _ sessions: [Session], on connection: PostgresConnection) throws -> Int {
        guard !sessions.isEmpty else { return 0 }
        let parameters: [(any PostgresEncodable)?] = [stream, PostgresTextArray(sessions.map(\.device)), PostgresTextArray(sessions.map(\.activityToken))]
        let older = try connection.execute("""
            DELETE FROM countdown_activity_sessions a
            USING unnest($2::text[], $3::text[]) AS t(device_id, token)
            WHERE a.stream_id = $1 AND a.device_id = t.device_id AND a.live_activity_token = t.token
            """, parameters)
        let ended = try connection.query("""
            SELECT s.device_id FROM live_activity_sessions s
            JOIN unnest($2::text[], $3::text[]) AS t(device_id, token) ON s.device_id = t.device_id AND s.live_activity_token = t.token
            WHERE s.stream_id = $1 ORDER BY s.device_id FOR UPDATE OF s
            """, parameters).map { try $0.decode("device_id", as: String.self) }
        let promoted = try promoteOlder(stream, devices: ended, on: connection)
        let newest = try connection.execute("""
            DELETE FROM live_activity_sessions s
            USING unnest($2::text[], $3::text[]) AS t(device_id, token)
            WHERE s.stream_id = $1 AND s.device_id = t.device_id AND s.live_activity_token = t.token
            """, parameters)
        return older + promoted + newest
    }

    /// Replaces the `live_activity_sessions` rows of `devices` (for `stream`) with each device's newest older
    /// activity, where it has one (moved out of `countdown_activity_sessions`); returns how many were replaced.
    @discardableResult
    public static func promoteOlder(_ stream: String, devices: [String], on connection: PostgresConnection) throws -> Int {
        guard !devices.isEmpty else { return 0 }
        return try connection.execute("""
            WITH \(movingNewestOlder(where: "a.device_id = ANY($2::text[])"))
            UPDATE live_activity_sessions s
            SET activity_id = moved.activity_id, user_id = moved.user_id, live_activity_token = moved.live_activity_token
            FROM moved WHERE s.stream_id = $1 AND s.device_id = moved.device_id
            """, [stream, PostgresTextArray(devices.sorted())])
    }

    /// Gives the older activities of a device without a `live_activity_sessions` row for `stream` (its newest
    /// activity went by a path that promotes nothing, such as a refused token) a row again, so an end claim can
    /// cover them: the newest older one moves into `live_activity_sessions`.
    public static func adoptOrphans(_ stream: String, device: String?, on connection: PostgresConnection) throws {
        try connection.execute("""
            WITH \(movingNewestOlder(where: """
                ($2::text IS NULL OR a.device_id = $2)
                  AND NOT EXISTS (SELECT 1 FROM live_activity_sessions s WHERE s.stream_id = a.stream_id AND s.device_id = a.device_id)
                """))
            INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token, activity_id)
            SELECT stream_id, device_id, user_id, live_activity_token, activity_id FROM moved ORDER BY device_id
            ON CONFLICT (stream_id, device_id) DO NOTHING
            """, [stream, device])
    }

    /// The CTEs `pick`, the newest older activity (`countdown_activity_sessions a`) of each device of stream `$1`
    /// matching `condition`, and `moved`, those deleted (returning their stream, device, activity, user and token).
    private static func movingNewestOlder(where condition: String) -> String {
        """
        pick AS (
            SELECT DISTINCT ON (a.device_id) a.device_id, a.activity_id FROM countdown_activity_sessions a
            WHERE a.stream_id = $1 AND \(condition)
            ORDER BY a.device_id, a.created_at DESC, a.activity_id DESC),
        moved AS (
            DELETE FROM countdown_activity_sessions a USING pick
            WHERE a.stream_id = $1 AND a.device_id = pick.device_id AND a.activity_id = pick.activity_id
            RETURNING a.stream_id, a.device_id, a.activity_id, a.user_id, a.live_activity_token)
        """
    }

    /// The CTEs deleting sessions of every activity: `newest` (from `live_activity_sessions`) and `older` (from
    /// `countdown_activity_sessions`), each table aliased `s`, joined with `using` when given, its rows matching
    /// `condition` and returning `returning`; and `gone`, what both returned.
    static func deleting(using: String? = nil, where condition: String, returning: String) -> String {
        let using = using.map { " USING \($0)" } ?? ""
        return """
            newest AS (
                DELETE FROM live_activity_sessions s\(using)
                WHERE \(condition)
                RETURNING \(returning)),
            older AS (
                DELETE FROM countdown_activity_sessions s\(using)
                WHERE \(condition)
                RETURNING \(returning)),
            gone AS (SELECT * FROM newest UNION ALL SELECT * FROM older)
            """
    }

    /// Releases end claims (to be retried, or re-registered with a new token meanwhile).
    public static func releaseEndClaims(_ stream: String, devices: [String], on connection: PostgresConnection) throws {
        guard !devices.isEmpty else { return }
        try connection.execute(
            "DELETE FROM countdown_session_end_claims WHERE stream_id = $1 AND device_id = ANY($2::text[])",
            [stream, PostgresTextArray(devices)])
    }
}

extension SessionQueries.Session {
    /// The key of the session's update records.
    public var recordKey: SessionDeliveryQueries.Key { .init(device: device, activity: activity) }
}
