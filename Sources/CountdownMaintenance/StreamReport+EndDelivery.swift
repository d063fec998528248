import Foundation
import Postgres
import Telemetry

extension StreamReport {
    /// A session's end push that has not gone out: `retrying` (within the dismissal window) or `undeliverable`.
    public struct EndDelivery: Sendable, Codable {
        public var deviceID, state, reason: String
        public var attempts: Int
        public var firstFailedAt: Date
        public var recordedAt: Date?
        public var token: String?
    }

    static func endDelivery(_ streamID: String, database: PostgresClient) async throws -> [EndDelivery] {
        try await database.query("""
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
                        recordedAt: try $0.decode("recorded_at"), token: try $0.decode("token", as: String?.self).map(Redact.token))
        }
    }
}
