import Foundation
import Postgres

/// The demo's rows (`countdown-admin seed-demo`): users, devices, streams and what hangs off them, every id starting
/// with `demo-`. The demo's content is the caller's; these write it.
public enum DemoSeedQueries {
    /// Deletes every demo stream, device and user (their participants, reminders, sessions and ledger rows go with
    /// them).
    public static func deleteDemoRows(on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM streams WHERE id LIKE 'demo-%'")
        try connection.execute("DELETE FROM devices WHERE device_id LIKE 'demo-%'")
        try connection.execute("DELETE FROM users WHERE id LIKE 'demo-%'")
    }

    /// How many users, devices and streams are not demo rows: a database holding any is not a demo database, and
    /// `seed-demo` refuses it unless forced.
    public static func foreignRows(on connection: PostgresConnection) throws -> Int {
        try connection.query("""
            SELECT (SELECT count(*) FROM users WHERE id NOT LIKE 'demo-%')
                 + (SELECT count(*) FROM devices WHERE device_id NOT LIKE 'demo-%')
                 + (SELECT count(*) FROM streams WHERE id NOT LIKE 'demo-%') AS n
            """).first?.decode("n", as: Int.self) ?? 0
    }

    public static func insertUser(_ id: String, name: String, locale: String, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO users (id, display_name, locale) VALUES ($1, $2, $3)", [id, name, locale])
    }

    /// Turns the user's `live_stream` notifications off.
    public static func disableLiveStream(user: String, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ($1, 'live_stream', false)", [user])
    }

    public static func insertDevice(_ id: String, user: String, platform: String, fcmToken: String?, pushToStartToken: String?,
                                    timezone: String, locale: String?, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, [id, user, platform, fcmToken, pushToStartToken, timezone, locale])
    }

    /// A stream planned `seconds` after the database's now; returns its planned start.
    public static func insertStream(_ id: String, title: String, startsIn seconds: Int, on connection: PostgresConnection) throws -> Date? {
        try connection.query("""
            INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + make_interval(secs => $3))
            RETURNING planned_start_at
            """, [id, title, seconds]).first?.decode("planned_start_at", as: Date.self)
    }

    public static func insertParticipant(stream: String, user: String, role: String, position: Int, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, $3, $4)",
                               [stream, user, role, position])
    }

    /// An active reminder of the user for the stream.
    public static func insertReminder(stream: String, user: String, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ($1, $2, 'active')", [stream, user])
    }
}
