import Postgres

extension SessionStore {
    /// What registering a runtime session did.
    public enum Registration: Sendable, Equatable {
        case registered
        /// The device is not the user's (or the user is unknown): nothing was written.
        case refused(DeviceOwnershipStore.Refusal)
        /// No such stream: nothing was written.
        case streamMissing
    }

    /// Upserts the runtime session of the user's device (idempotent: a repeat with the same values writes nothing).
    /// Run it in a transaction: the device's row stays share-locked until the session is written, so the device
    /// cannot be taken over in between.
    public static func register(stream: String, device: String, user: String, token: String, activity: String?,
                                on connection: PostgresConnection) throws -> Registration {
        if let refusal = try DeviceOwnershipStore.refusal(of: device, userID: user, lock: true, on: connection) { return .refused(refusal) }
        guard try connection.query("SELECT 1 FROM streams WHERE id = $1", [stream]).first != nil else { return .streamMissing }
        try connection.execute("""
            INSERT INTO live_activity_sessions AS s (stream_id, device_id, user_id, live_activity_token, activity_id)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (stream_id, device_id) DO UPDATE SET
                user_id = EXCLUDED.user_id, live_activity_token = EXCLUDED.live_activity_token, activity_id = EXCLUDED.activity_id
            WHERE (s.user_id, s.live_activity_token, s.activity_id) IS DISTINCT FROM
                  (EXCLUDED.user_id, EXCLUDED.live_activity_token, EXCLUDED.activity_id)
            """, [stream, device, user, token, activity])
        return .registered
    }

    /// Deletes the runtime session, if any, of the user's own device; nil when the device is the user's (whether
    /// or not it had a session), the refusal otherwise.
    public static func removeOwn(stream: String, device: String, user: String, on connection: PostgresConnection) throws -> DeviceOwnershipStore.Refusal? {
        let removed = try connection.execute("""
            DELETE FROM live_activity_sessions
            WHERE stream_id = $1 AND device_id = $2
              AND EXISTS (SELECT 1 FROM devices WHERE device_id = $2 AND user_id = $3)
            """, [stream, device, user])
        if removed > 0 { return nil }
        return try DeviceOwnershipStore.refusal(of: device, userID: user, lock: false, on: connection)
    }
}
