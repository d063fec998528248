import Postgres

/// `stream_reminders` and the devices and preferences a reminder goes to.
public enum ReminderQueries {
    /// One device of a user with an active reminder (no device: `device` and `fcmToken` are nil).
    public struct Recipient: Sendable {
        public var user: String
        public var device: String?
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
        public var enabled: Bool
    }

    /// Where pages of `pageSize` users with an active reminder (`includingSent`: or a sent one) end, in user id
    /// order: every `pageSize`-th user. Empty when all of them fit in one page.
    public static func pageEnds(_ stream: String, pageSize: Int, includingSent: Bool = false, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT user_id FROM (
                SELECT user_id, row_number() OVER (ORDER BY user_id) AS n FROM stream_reminders
                WHERE stream_id = $1 AND \(statuses(includingSent))) AS r
            WHERE n % $2 = 0 ORDER BY user_id
            """, [stream, pageSize]).map { try $0.decode("user_id", as: String.self) }
    }

    /// The reminders a fan-out sends to: active ones (read through the primary key), or, for a fan-out that follows
    /// a move (SPEC 12.2), the sent ones too.
    static func statuses(_ includingSent: Bool) -> String {
        includingSent ? "status IN ('active', 'sent')" : "status = 'active'"
    }

    /// The next `limit` users after `cursor` (in id order) with an active reminder for the stream (`includingSent`:
    /// or a sent one).
    public static func activeUsers(_ stream: String, after cursor: String, through: String? = nil, limit: Int, includingSent: Bool = false,
                                   on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT user_id FROM stream_reminders
            WHERE stream_id = $1 AND \(statuses(includingSent)) AND user_id > $2 AND ($4::text IS NULL OR user_id <= $4)
            ORDER BY user_id LIMIT $3
            """, [stream, cursor, limit, through]).map { try $0.decode("user_id", as: String.self) }
    }

    /// The devices with an FCM token and the `live_stream` preference of `users` (in their order), read by key.
    ///
    /// Each lookup is a lateral subquery the planner cannot flatten (`LIMIT` / `OFFSET 0`): an index lookup per
    /// user. As plain joins, a plan made for the page's real size (the first executions of the prepared statement
    /// on a session, or every one when statements are not prepared) hashed the whole `users` and
    /// `notification_preferences` tables for each page of 2,000 users.
    public static func recipients(_ users: [String], on connection: PostgresConnection) throws -> [Recipient] {
        guard !users.isEmpty else { return [] }
        return try connection.query("""
            SELECT r.user_id, d.device_id, d.fcm_token, d.locale AS locale, u.locale AS user_locale,
                   coalesce(np.enabled, true) AS enabled
            FROM unnest($1::text[]) WITH ORDINALITY AS r(user_id, n)
            JOIN LATERAL (SELECT locale FROM users WHERE id = r.user_id LIMIT 1) AS u ON true
            LEFT JOIN LATERAL (SELECT device_id, fcm_token, locale FROM devices
                               WHERE user_id = r.user_id AND coalesce(fcm_token, '') <> '' OFFSET 0) AS d ON true
            LEFT JOIN LATERAL (SELECT enabled FROM notification_preferences
                               WHERE user_id = r.user_id AND category = 'live_stream' LIMIT 1) AS np ON true
            ORDER BY r.n
            """, [PostgresTextArray(users)]).map { row in
            Recipient(user: try row.decode("user_id"), device: try row.decode("device_id"), fcmToken: try row.decode("fcm_token"),
                      locale: try row.decode("locale"), userLocale: try row.decode("user_locale"), enabled: try row.decode("enabled"))
        }
    }

    /// Marks the active reminders of `users` for the stream as sent (and sets `updated_at`, so the touch trigger
    /// is not called per row).
    ///
    /// The users' id range (taken in SQL, so by the column's collation) bounds the rows read: without it, a plan
    /// made for the page's real size (the first executions of the prepared statement on a session) hashed every
    /// active reminder of the stream (a million for the largest) to find a page's 2,000.
    public static func markSent(_ stream: String, users: [String], on connection: PostgresConnection) throws {
        guard !users.isEmpty else { return }
        try connection.execute("""
            UPDATE stream_reminders r SET status = 'sent', updated_at = now()
            FROM unnest($2::text[]) AS t(user_id)
            WHERE r.stream_id = $1 AND r.user_id = t.user_id AND r.status = 'active'
              AND r.user_id >= (SELECT min(b) FROM unnest($2::text[]) AS b) AND r.user_id <= (SELECT max(b) FROM unnest($2::text[]) AS b)
            """, [stream, PostgresTextArray(users)])
    }
}
