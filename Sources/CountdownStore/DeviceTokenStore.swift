import CountdownDomain
import Postgres

/// Clears tokens the push service called dead, only if the device still holds that same token.
public enum DeviceTokenStore {
    public static func clearStartTokens(_ dead: [(device: String, fcm: String, pts: String)], transport: PushTransportKind,
                                 on connection: PostgresConnection) throws {
        guard !dead.isEmpty else { return }
        let dead = dead.sorted { $0.device < $1.device }  // devices are locked in id order by every batch writer
        // FCM names the registration token dead; direct APNs names the push-to-start token.
        let column = transport == .apns ? "push_to_start_token" : "fcm_token"
        let tokens = transport == .apns ? dead.map(\.pts) : dead.map(\.fcm)
        try connection.execute("""
            UPDATE devices d SET \(column) = NULL
            FROM unnest($1::text[], $2::text[]) AS t(device_id, token)
            WHERE d.device_id = t.device_id AND d.\(column) = t.token
            """, [PostgresTextArray(dead.map(\.device)), PostgresTextArray(tokens)])
    }

    /// Clears dead FCM tokens found while sending reminders.
    public static func clearFCMTokens(_ dead: [(device: String, fcm: String)], on connection: PostgresConnection) throws {
        guard !dead.isEmpty else { return }
        let dead = dead.sorted { $0.device < $1.device }
        try connection.execute("""
            UPDATE devices d SET fcm_token = NULL
            FROM unnest($1::text[], $2::text[]) AS t(device_id, token)
            WHERE d.device_id = t.device_id AND d.fcm_token = t.token
            """, [PostgresTextArray(dead.map(\.device)), PostgresTextArray(dead.map(\.fcm))])
    }
}
