import CountdownDomain
import Postgres

/// Clears tokens a push service refused, only where the device (or session) still holds that same token, and
/// records every cleared value in `countdown_token_invalidations` in the same statement, with the device's owner
/// then, so `countdown-admin tokens restore` can put it back while the device still has that owner.
public enum DeviceTokenQueries {
    /// One refused token.
    public struct Invalidation: Sendable {
        public var device: String
        public var token: TargetToken
        public var value: String
        public var reason: String
        /// The stream the push was for (the session's stream for a runtime token).
        public var stream: String?

        public init(device: String, token: TargetToken, value: String, reason: String, stream: String?) {
            self.device = device
            self.token = token
            self.value = value
            self.reason = reason
            self.stream = stream
        }
    }

    public static func clear(_ invalidations: [Invalidation], on connection: PostgresConnection) throws {
        // Devices are locked in id order by every batch writer.
        let sorted = invalidations.filter { !$0.value.isEmpty }.sorted { ($0.device, $0.stream ?? "") < ($1.device, $1.stream ?? "") }
        for kind in TargetToken.allCases {
            let group = sorted.filter { $0.token == kind }
            guard !group.isEmpty else { continue }
            let parameters: [(any PostgresEncodable)?] = [
                PostgresTextArray(group.map(\.device)), PostgresTextArray(group.map(\.value)), PostgresTextArray(group.map(\.reason)),
                PostgresTextArray(group.map { $0.stream ?? "" }), kind.rawValue,
            ]
            try connection.execute(statement(for: kind), parameters)
        }
    }

    private static func statement(for kind: TargetToken) -> String {
        let refused = "unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(device_id, token, reason, stream_id)"
        switch kind {
        case .runtime:
            return """
                WITH \(SessionQueries.deleting(
                    using: refused, where: "s.stream_id = t.stream_id AND s.device_id = t.device_id AND s.live_activity_token = t.token",
                    returning: "s.device_id, s.live_activity_token AS token, t.reason, s.stream_id, s.user_id, s.activity_id"))
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, stream_id, user_id, activity_id)
                SELECT device_id, $5, token, reason, stream_id, user_id, activity_id FROM gone
                """
        case .fcm, .pushToStart:
            let column = kind == .fcm ? "fcm_token" : "push_to_start_token"
            return """
                WITH cleared AS (
                    UPDATE devices d SET \(column) = NULL FROM \(refused)
                    WHERE d.device_id = t.device_id AND d.\(column) = t.token
                    RETURNING d.device_id, d.user_id, t.token, t.reason, nullif(t.stream_id, '') AS stream_id)
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, stream_id, user_id)
                SELECT DISTINCT ON (device_id) device_id, $5, token, reason, stream_id, user_id FROM cleared
                """
        }
    }
}
