import Foundation
import Postgres

extension ConsoleReadQueries {
    /// The planned start a running countdown last accepted (an update or the start), per device and channel
    /// (`live_activity`: an iOS session; `android_countdown`: an Android device).
    public struct AcceptedState: Sendable, Equatable, Codable {
        public var deviceID: String
        public var channel: String
        public var shownStartAt: Date
        public var acceptedAt: Date
        public var seq: Int
    }

    /// A reminder push to one device.
    public struct ReminderDelivery: Sendable, Equatable, Codable {
        public var deviceID: String
        public var userID: String
        /// `sending` or `sent`.
        public var status: String
        public var sentAt: Date?
    }

    /// What each countdown of the stream last accepted (`countdown_session_deliveries`).
    public static func acceptedStates(stream streamID: String, limit: Int = 5_000, on connection: PostgresConnection) throws -> [AcceptedState] {
        try connection.query("""
            SELECT device_id, channel, shown_start_at, accepted_at, seq FROM countdown_session_deliveries
            WHERE stream_id = $1 ORDER BY accepted_at, device_id LIMIT $2
            """, [streamID, limit]).map {
            AcceptedState(deviceID: try $0.decode("device_id"), channel: try $0.decode("channel"), shownStartAt: try $0.decode("shown_start_at"),
                          acceptedAt: try $0.decode("accepted_at"), seq: Int(try $0.decode("seq", as: Int64.self)))
        }
    }

    /// The stream's reminder pushes per device (`countdown_reminder_deliveries`).
    public static func reminderDeliveries(stream streamID: String, limit: Int = 5_000, on connection: PostgresConnection) throws -> [ReminderDelivery] {
        try connection.query("""
            SELECT device_id, user_id, status, sent_at FROM countdown_reminder_deliveries WHERE stream_id = $1 ORDER BY sent_at, device_id LIMIT $2
            """, [streamID, limit]).map {
            ReminderDelivery(deviceID: try $0.decode("device_id"), userID: try $0.decode("user_id"), status: try $0.decode("status"),
                             sentAt: try $0.decode("sent_at"))
        }
    }

    /// Operator actions on the stream (audit rows whose target is its id), and pauses and resumes of any kind
    /// between `from` and `to`; oldest first.
    public static func operatorActions(stream streamID: String, from: Date, to: Date, limit: Int = defaultLimit,
                                       on connection: PostgresConnection) throws -> [AuditQueries.Entry] {
        try connection.query("""
            SELECT \(AuditQueries.columns) FROM countdown_audit
            WHERE target = $1 OR (action IN ('pause', 'resume') AND at BETWEEN $2 AND $3 AND outcome LIKE 'done%')
            ORDER BY id LIMIT $4
            """, [streamID, from, to, limit]).map(AuditQueries.entry)
    }
}
