import Postgres

/// `countdown_retired_sessions`: runtime sessions a device takeover or a long move (`activityLifetime`) removed from
/// `live_activity_sessions`, kept until their end push was accepted or their token is dead; failures are retried
/// until the window closes and then recorded in `countdown_undeliverable_ends`.
public enum RetiredSessionQueries {
    /// A retired session with what its end push needs (the device's current FCM token, locale and time zone).
    public struct Retired: Sendable, Equatable {
        public var stream: String
        public var device: String
        public var activityToken: String
        public var user: String?
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
        /// Failed end pushes so far.
        public var attempts: Int
        /// Why it was retired: `takeover` (another user logged in on the device) or `activity_lifetime` (the stream
        /// moved past the activity's 8-hour life).
        public var reason: String
        /// The device's IANA time zone, when it sent one.
        public var timeZone: String?
    }

    /// `reason` of a session retired because its stream moved past its activity's 8-hour life.
    public static let activityLifetime = "activity_lifetime"

    /// One retired session's failed end push this time (`reason` as in `EndDeliveryQueries.Failure`).
    public struct Failure: Sendable {
        public var activityToken: String
        public var reason: String

        public init(activityToken: String, reason: String) {
            self.activityToken = activityToken
            self.reason = reason
        }
    }

    /// Claims the device's retired sessions of `stream` for `seconds` (those no other sender holds, or whose
    /// claim expired) and returns them.
    public static func claim(stream: String, device: String, seconds: Int, owner: String?, on connection: PostgresConnection) throws -> [Retired] {
        try connection.query("""
            WITH claimed AS (
                UPDATE countdown_retired_sessions r SET claimed_until = now() + make_interval(secs => $3), claimed_by = $4
                WHERE r.stream_id = $1 AND r.device_id = $2 AND (r.claimed_until IS NULL OR r.claimed_until < now())
                RETURNING r.stream_id, r.device_id, r.live_activity_token, r.user_id, r.attempts, r.reason
            )
            SELECT c.stream_id, c.device_id, c.live_activity_token, c.user_id, c.attempts, c.reason,
                   nullif(d.fcm_token, '') AS fcm_token, d.locale AS locale, u.locale AS user_locale, nullif(d.timezone, '') AS timezone
            FROM claimed c
            LEFT JOIN devices d ON d.device_id = c.device_id
            LEFT JOIN users u ON u.id = c.user_id
            ORDER BY c.live_activity_token
            """, [stream, device, seconds, owner]).map { row in
            Retired(stream: try row.decode("stream_id"), device: try row.decode("device_id"), activityToken: try row.decode("live_activity_token"),
                    user: try row.decode("user_id"), fcmToken: try row.decode("fcm_token"), locale: try row.decode("locale"),
                    userLocale: try row.decode("user_locale"), attempts: try row.decode("attempts"), reason: try row.decode("reason"),
                    timeZone: try row.decode("timezone"))
        }
    }

    /// How many retired sessions of the device and stream are left (claimed or not).
    public static func count(stream: String, device: String, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM countdown_retired_sessions WHERE stream_id = $1 AND device_id = $2",
                             [stream, device]).first?.decode("n", as: Int.self) ?? 0
    }

    /// Deletes the retired sessions whose end push was accepted or whose token is dead.
    @discardableResult
    public static func finished(stream: String, device: String, tokens: [String], on connection: PostgresConnection) throws -> Int {
        guard !tokens.isEmpty else { return 0 }
        return try connection.execute("""
            DELETE FROM countdown_retired_sessions
            WHERE stream_id = $1 AND device_id = $2 AND live_activity_token = ANY($3::text[])
            """, [stream, device, PostgresTextArray(tokens)])
    }

    /// Records failed end pushes and releases their claims; those whose first failure is older than
    /// `windowSeconds` are moved to `countdown_undeliverable_ends`. Returns the outcome for the backoff and the
    /// reasons given up on.
    public static func failed(_ failures: [Failure], stream: String, device: String, windowSeconds: Int,
                              on connection: PostgresConnection) throws -> EndDeliveryQueries.Outcome {
        var outcome = EndDeliveryQueries.Outcome()
        guard !failures.isEmpty else { return outcome }
        let rows = try connection.query("""
            UPDATE countdown_retired_sessions r
            SET attempts = r.attempts + 1, last_reason = t.reason, first_failed_at = coalesce(r.first_failed_at, now()),
                claimed_until = NULL, claimed_by = NULL
            FROM unnest($3::text[], $4::text[]) AS t(token, reason)
            WHERE r.stream_id = $1 AND r.device_id = $2 AND r.live_activity_token = t.token
            RETURNING r.attempts, coalesce(r.first_failed_at, now()) <= now() - make_interval(secs => $5) AS expired,
                extract(epoch FROM now() - coalesce(r.first_failed_at, now()))::float8 AS failing_for
            """, [stream, device, PostgresTextArray(failures.map(\.activityToken)), PostgresTextArray(failures.map(\.reason)), windowSeconds])
        for row in rows where !(try row.decode("expired", as: Bool.self)) {
            EndDeliveryQueries.retrying(&outcome, device: device, attempts: try row.decode("attempts"), failingFor: try row.decode("failing_for"))
        }
        guard rows.count > outcome.retrying else { return outcome }
        outcome.undeliverable = try connection.query("""
            WITH gone AS (
                DELETE FROM countdown_retired_sessions r
                WHERE r.stream_id = $1 AND r.device_id = $2 AND r.first_failed_at <= now() - make_interval(secs => $3)
                RETURNING r.stream_id, r.device_id, r.live_activity_token, r.last_reason, r.attempts, r.first_failed_at
            )
            INSERT INTO countdown_undeliverable_ends (stream_id, device_id, live_activity_token, reason, attempts, first_failed_at)
            SELECT stream_id, device_id, live_activity_token, 'takeover: ' || coalesce(last_reason, 'unknown'), attempts, first_failed_at FROM gone
            RETURNING reason
            """, [stream, device, windowSeconds]).map { try $0.decode("reason", as: String.self) }
        return outcome
    }

    /// Up to `limit` (stream, device) pairs with retired sessions left, for the reconciler.
    public static func pending(limit: Int, on connection: PostgresConnection) throws -> [(stream: String, device: String)] {
        try connection.query("""
            SELECT DISTINCT stream_id, device_id FROM countdown_retired_sessions ORDER BY stream_id, device_id LIMIT $1
            """, [limit]).map { (try $0.decode("stream_id", as: String.self), try $0.decode("device_id", as: String.self)) }
    }

    /// Retires the stream's sessions of `devices` (every activity) whose activity outlived iOS's 8 hours before the stream starts
    /// (reason `activityLifetime`; their ledger rows reopen, `StartLedger.reopenOutlived`): each gets an end push
    /// saying the stream moved, and to when, and nothing more. Returns how many.
    @discardableResult
    public static func retireOutlived(_ stream: String, devices: [String], on connection: PostgresConnection) throws -> Int {
        guard !devices.isEmpty else { return 0 }
        return try connection.execute("""
            WITH \(SessionQueries.deleting(where: "s.stream_id = $1 AND s.device_id = ANY($2::text[])",
                                           returning: "s.stream_id, s.device_id, s.live_activity_token, s.user_id"))
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
            SELECT stream_id, device_id, live_activity_token, user_id, $3 FROM gone
            ON CONFLICT DO NOTHING
            """, [stream, PostgresTextArray(devices.sorted()), activityLifetime])
    }
}
