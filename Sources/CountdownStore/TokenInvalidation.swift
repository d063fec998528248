import Foundation
import Postgres

/// A token the worker cleared (`countdown_token_invalidations`), as `countdown-admin tokens` and the console list it.
public struct TokenInvalidation: Sendable, Codable, Equatable {
    public var id: Int
    public var deviceID: String
    /// `fcm`, `push_to_start` or `runtime`.
    public var token: String
    /// The old value; readers redact or mask it before it leaves the process.
    public var value: String
    public var reason: String
    public var streamID: String?
    public var invalidatedAt: Date
    public var restoredAt: Date?

    public init(id: Int, deviceID: String, token: String, value: String, reason: String, streamID: String?, invalidatedAt: Date,
                restoredAt: Date?) {
        self.id = id
        self.deviceID = deviceID
        self.token = token
        self.value = value
        self.reason = reason
        self.streamID = streamID
        self.invalidatedAt = invalidatedAt
        self.restoredAt = restoredAt
    }

    /// The columns `init(row:)` reads.
    public static let columns = "id, device_id, token_kind, old_value, reason, stream_id, invalidated_at, restored_at"

    public init(row: PostgresRow) throws {
        self.init(id: try row.decode("id"), deviceID: try row.decode("device_id"), token: try row.decode("token_kind"),
                  value: try row.decode("old_value"), reason: try row.decode("reason"), streamID: try row.decode("stream_id"),
                  invalidatedAt: try row.decode("invalidated_at"), restoredAt: try row.decode("restored_at"))
    }
}
