import Foundation
import Postgres

/// The operator console's reads (SPEC 11): each an indexed lookup by id, bounded by `limit`, so a page costs the
/// same with a million devices as with ten. Tokens come back as stored; the console masks them before showing them.
public enum ConsoleReadQueries {
    /// Rows any list of the console shows at most.
    public static let defaultLimit = 200

    /// One change of a stream's planned start.
    public struct PlannedStartChange: Sendable, Equatable, Codable {
        public var from: Date
        public var to: Date
        public var changedAt: Date
    }

    /// A device row.
    public struct Device: Sendable, Equatable, Codable {
        public var deviceID: String
        public var userID: String?
        public var platform: String
        public var fcmToken: String?
        public var pushToStartToken: String?
        public var timezone: String?
        public var locale: String?
        public var createdAt: Date
        public var updatedAt: Date
    }

    /// A start-ledger row: the start decision for one device of one stream.
    public struct StartDecision: Sendable, Equatable, Codable {
        public var streamID: String
        public var userID: String
        public var deviceID: String
        public var status: String
        public var reason: String?
        public var attempts: Int
        public var sentAt: Date?
        public var updatedAt: Date
    }

    /// A runtime session.
    public struct Session: Sendable, Equatable, Codable {
        public var streamID: String
        public var deviceID: String
        public var userID: String?
        public var token: String
        public var updatedAt: Date
    }

    /// A token the worker cleared.
    public typealias Invalidation = TokenInvalidation

    /// A user row with the `live_stream` preference.
    public struct User: Sendable, Equatable, Codable {
        public var id: String
        public var displayName: String
        public var locale: String
        public var liveStreamEnabled: Bool
    }

    /// A stream the user takes part in.
    public struct Participation: Sendable, Equatable, Codable {
        public var streamID: String
        public var title: String
        public var status: String
        public var plannedStartAt: Date
        public var role: String
    }

    /// A reminder of the user.
    public struct Reminder: Sendable, Equatable, Codable {
        public var streamID: String
        public var status: String
    }

    /// What an id names: any of `stream`, `device`, `user`.
    public static func search(_ id: String, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT 'stream' AS kind FROM streams WHERE id = $1
            UNION ALL SELECT 'device' FROM devices WHERE device_id = $1
            UNION ALL SELECT 'user' FROM users WHERE id = $1
            """, [id]).map { try $0.decode("kind") }
    }

    /// Every change of the stream's planned start, oldest first.
    public static func plannedStartHistory(_ streamID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [PlannedStartChange] {
        try connection.query("""
            SELECT old_planned_start_at, new_planned_start_at, changed_at FROM countdown_planned_start_history
            WHERE stream_id = $1 ORDER BY changed_at, id LIMIT $2
            """, [streamID, limit]).map {
            PlannedStartChange(from: try $0.decode("old_planned_start_at"), to: try $0.decode("new_planned_start_at"), changedAt: try $0.decode("changed_at"))
        }
    }

    /// The device, or nil.
    public static func device(_ deviceID: String, on connection: PostgresConnection) throws -> Device? {
        try connection.query("""
            SELECT device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale, created_at, updated_at
            FROM devices WHERE device_id = $1
            """, [deviceID]).first.map(device)
    }

    /// The user's devices, by id.
    public static func devices(ofUser userID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [Device] {
        try connection.query("""
            SELECT device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale, created_at, updated_at
            FROM devices WHERE user_id = $1 ORDER BY device_id LIMIT $2
            """, [userID, limit]).map(device)
    }

    private static func device(_ row: PostgresRow) throws -> Device {
        Device(deviceID: try row.decode("device_id"), userID: try row.decode("user_id"), platform: try row.decode("platform"),
               fcmToken: try row.decode("fcm_token"), pushToStartToken: try row.decode("push_to_start_token"),
               timezone: try row.decode("timezone"), locale: try row.decode("locale"), createdAt: try row.decode("created_at"),
               updatedAt: try row.decode("updated_at"))
    }

    /// The start decisions for a device, newest first.
    public static func startDecisions(device deviceID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [StartDecision] {
        try connection.query("""
            SELECT stream_id, user_id, device_id, status, reason, attempts, sent_at, updated_at FROM countdown_start_ledger
            WHERE device_id = $1 ORDER BY updated_at DESC LIMIT $2
            """, [deviceID, limit]).map(startDecision)
    }

    private static func startDecision(_ row: PostgresRow) throws -> StartDecision {
        StartDecision(streamID: try row.decode("stream_id"), userID: try row.decode("user_id"), deviceID: try row.decode("device_id"),
                      status: try row.decode("status"), reason: try row.decode("reason"), attempts: try row.decode("attempts"),
                      sentAt: try row.decode("sent_at"), updatedAt: try row.decode("updated_at"))
    }

    /// The device's runtime sessions.
    public static func sessions(device deviceID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [Session] {
        try connection.query("""
            SELECT stream_id, device_id, user_id, live_activity_token, updated_at FROM live_activity_sessions
            WHERE device_id = $1 ORDER BY updated_at DESC LIMIT $2
            """, [deviceID, limit]).map {
            Session(streamID: try $0.decode("stream_id"), deviceID: try $0.decode("device_id"), userID: try $0.decode("user_id"),
                    token: try $0.decode("live_activity_token"), updatedAt: try $0.decode("updated_at"))
        }
    }

    /// Tokens cleared on the device (or, with `stream`, for that stream), newest first.
    public static func invalidations(device deviceID: String? = nil, stream streamID: String? = nil, limit: Int = defaultLimit,
                                     on connection: PostgresConnection) throws -> [Invalidation] {
        try connection.query("""
            SELECT \(TokenInvalidation.columns) FROM countdown_token_invalidations
            WHERE ($1::text IS NULL OR device_id = $1) AND ($2::text IS NULL OR stream_id = $2) AND ($1::text IS NOT NULL OR $2::text IS NOT NULL)
            ORDER BY invalidated_at DESC, id DESC LIMIT $3
            """, [deviceID, streamID, limit]).map(TokenInvalidation.init(row:))
    }

    /// The user, or nil.
    public static func user(_ userID: String, on connection: PostgresConnection) throws -> User? {
        try connection.query("""
            SELECT u.id, u.display_name, u.locale, coalesce(np.enabled, true) AS enabled FROM users u
            LEFT JOIN notification_preferences np ON np.user_id = u.id AND np.category = 'live_stream' WHERE u.id = $1
            """, [userID]).first.map {
            User(id: try $0.decode("id"), displayName: try $0.decode("display_name"), locale: try $0.decode("locale"),
                 liveStreamEnabled: try $0.decode("enabled"))
        }
    }

    /// The streams the user is creator or guest of, latest planned start first.
    public static func participations(ofUser userID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [Participation] {
        try connection.query("""
            SELECT s.id, s.title, s.status, s.planned_start_at, p.role FROM stream_participants p JOIN streams s ON s.id = p.stream_id
            WHERE p.user_id = $1 ORDER BY s.planned_start_at DESC, s.id LIMIT $2
            """, [userID, limit]).map {
            Participation(streamID: try $0.decode("id"), title: try $0.decode("title"), status: try $0.decode("status"),
                          plannedStartAt: try $0.decode("planned_start_at"), role: try $0.decode("role"))
        }
    }

    /// The user's reminders.
    public static func reminders(ofUser userID: String, limit: Int = defaultLimit, on connection: PostgresConnection) throws -> [Reminder] {
        try connection.query("""
            SELECT stream_id, status FROM stream_reminders WHERE user_id = $1 ORDER BY created_at DESC, stream_id LIMIT $2
            """, [userID, limit]).map { Reminder(streamID: try $0.decode("stream_id"), status: try $0.decode("status")) }
    }
}
