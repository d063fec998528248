import CountdownDomain
import Foundation
import Postgres

/// The reads behind an operator's report of one stream (`countdown-admin show`, the console's stream page), each by
/// the stream's id and in the order the report lists it. Tokens come back as stored; the report redacts them.
public enum StreamReportQueries {
    /// The stream row, with the database's clock.
    public struct Stream: Sendable, Equatable {
        public var id, title, status: String
        public var plannedStartAt: Date
        public var databaseNow: Date
    }
    public struct Participant: Sendable, Codable, Equatable { public var userID, name, role: String; public var position: Int }
    public struct LedgerEntry: Sendable, Codable, Equatable {
        public var userID, deviceID, status: String
        public var reason: String?
        public var attempts: Int
        public var sentAt: Date?
        /// When the row last changed (the decision's time for a skip or failure).
        public var updatedAt: Date?
        /// The device's platform now (nil when the device is gone).
        public var platform: String?
        /// An Android device's countdown (SPEC 10.4), nil for other platforms.
        public var android: AndroidCountdown?
    }
    /// What the fleet sent an Android device for the stream after its start: the last `seq`, and the end.
    public struct AndroidCountdown: Sendable, Codable, Equatable {
        /// The `seq` of the last message (1: the start only).
        public var seq: Int
        public var endedAt: Date?
        /// The end's reason (`ready`…`expired`, `takeover`, `dead_token:…`, `undeliverable`).
        public var endedReason: String?
    }
    public struct Session: Sendable, Codable, Equatable { public var deviceID: String; public var userID: String?; public var token: String; public var updatedAt: Date }
    public struct Reminder: Sendable, Codable, Equatable { public var userID, status: String }
    /// A session's end push that has not gone out: `retrying` (within the dismissal window) or `undeliverable`.
    public struct EndDelivery: Sendable, Codable, Equatable {
        public var deviceID, state, reason: String
        public var attempts: Int
        public var firstFailedAt: Date
        public var recordedAt: Date?
        public var token: String?
    }

    /// Everything one report reads, on one connection.
    public struct Rows: Sendable {
        public var stream: Stream
        public var devices: [DeviceCandidate]
        public var sessions: [Session]
        public var endDelivery: [EndDelivery]
        public var participants: [Participant]
        public var ledger: [LedgerEntry]
        public var reminders: [Reminder]
    }

    /// On one connection: what the report of `streamID` reads (nil when the stream does not exist).
    public static func rows(_ streamID: String, on connection: PostgresConnection) throws -> Rows? {
        guard let stream = try Self.stream(streamID, on: connection) else { return nil }
        return Rows(stream: stream, devices: try devices(streamID, on: connection), sessions: try sessions(streamID, on: connection),
                    endDelivery: try endDelivery(streamID, on: connection), participants: try participants(streamID, on: connection),
                    ledger: try ledger(streamID, on: connection), reminders: try reminders(streamID, on: connection))
    }

    /// The stream, or nil when it does not exist.
    public static func stream(_ streamID: String, on connection: PostgresConnection) throws -> Stream? {
        try connection.query("SELECT id, title, status, planned_start_at, now() AS now FROM streams WHERE id = $1", [streamID]).first.map {
            Stream(id: try $0.decode("id"), title: try $0.decode("title"), status: try $0.decode("status"),
                   plannedStartAt: try $0.decode("planned_start_at"), databaseNow: try $0.decode("now"))
        }
    }

    /// The creator first, then the guests by position.
    public static func participants(_ streamID: String, on connection: PostgresConnection) throws -> [Participant] {
        try connection.query("""
            SELECT p.user_id, u.display_name, p.role, p.position FROM stream_participants p JOIN users u ON u.id = p.user_id
            WHERE p.stream_id = $1 ORDER BY (p.role <> 'creator'), p.position, p.user_id
            """, [streamID]).map {
            Participant(userID: try $0.decode("user_id"), name: try $0.decode("display_name"), role: try $0.decode("role"), position: try $0.decode("position"))
        }
    }

    /// The participants' devices as the start fan-out sees them (`StartLedger.candidates`), by user and device.
    public static func devices(_ streamID: String, on connection: PostgresConnection) throws -> [DeviceCandidate] {
        try StartLedger.candidates([streamID], scope: .stream, on: connection).map(\.1)
            .sorted { ($0.userID, $0.deviceID) < ($1.userID, $1.deviceID) }
    }

    /// The start ledger's rows, by user and device; an Android device's sent start carries its countdown.
    public static func ledger(_ streamID: String, on connection: PostgresConnection) throws -> [LedgerEntry] {
        try connection.query("""
            SELECT l.user_id, l.device_id, l.status, l.reason, l.attempts, l.sent_at, l.updated_at, d.platform,
                   greatest(l.android_seq, 1) AS android_seq, l.android_ended_at, l.android_end_reason
            FROM countdown_start_ledger l LEFT JOIN devices d ON d.device_id = l.device_id
            WHERE l.stream_id = $1 ORDER BY l.user_id, l.device_id
            """, [streamID]).map { row in
            let platform: String? = try row.decode("platform")
            let status: String = try row.decode("status")
            let android = platform == "android" && status == "sent" ? AndroidCountdown(
                seq: try row.decode("android_seq"), endedAt: try row.decode("android_ended_at"),
                endedReason: try row.decode("android_end_reason")) : nil
            return LedgerEntry(userID: try row.decode("user_id"), deviceID: try row.decode("device_id"), status: status,
                               reason: try row.decode("reason"), attempts: try row.decode("attempts"), sentAt: try row.decode("sent_at"),
                               updatedAt: try row.decode("updated_at"), platform: platform, android: android)
        }
    }

    /// The runtime sessions, by device.
    public static func sessions(_ streamID: String, on connection: PostgresConnection) throws -> [Session] {
        try connection.query("""
            SELECT device_id, user_id, live_activity_token, updated_at FROM live_activity_sessions WHERE stream_id = $1 ORDER BY device_id
            """, [streamID]).map {
            Session(deviceID: try $0.decode("device_id"), userID: try $0.decode("user_id"), token: try $0.decode("live_activity_token"),
                    updatedAt: try $0.decode("updated_at"))
        }
    }

    /// The reminders, by user.
    public static func reminders(_ streamID: String, on connection: PostgresConnection) throws -> [Reminder] {
        try connection.query("SELECT user_id, status FROM stream_reminders WHERE stream_id = $1 ORDER BY user_id", [streamID]).map {
            Reminder(userID: try $0.decode("user_id"), status: try $0.decode("status"))
        }
    }

    /// End pushes being retried (`countdown_end_attempts`) and those given up on (`countdown_undeliverable_ends`),
    /// by device, `retrying` before `undeliverable`.
    public static func endDelivery(_ streamID: String, on connection: PostgresConnection) throws -> [EndDelivery] {
        try connection.query("""
            SELECT device_id, 'retrying' AS state, last_reason AS reason, attempts, first_failed_at, NULL::timestamptz AS recorded_at,
                   NULL::text AS token
            FROM countdown_end_attempts WHERE stream_id = $1
            UNION ALL
            SELECT device_id, 'undeliverable', reason, attempts, first_failed_at, recorded_at, live_activity_token
            FROM countdown_undeliverable_ends WHERE stream_id = $1
            ORDER BY 1, 2
            """, [streamID]).map {
            EndDelivery(deviceID: try $0.decode("device_id"), state: try $0.decode("state"), reason: try $0.decode("reason"),
                        attempts: try $0.decode("attempts"), firstFailedAt: try $0.decode("first_failed_at"),
                        recordedAt: try $0.decode("recorded_at"), token: try $0.decode("token"))
        }
    }
}
