import Postgres

extension SessionQueries {
    /// What registering a runtime session did.
    public enum Registration: Sendable, Equatable {
        case registered
        /// The device is not the user's (or the user is unknown): nothing was written.
        case refused(DeviceOwnershipQueries.Refusal)
        /// No such stream: nothing was written.
        case streamMissing
    }

    /// Upserts the runtime session of the user's device (idempotent: a repeat with the same values writes nothing).
    /// Sessions are per activity (SPEC 12.1): `live_activity_sessions` holds the newest activity; when `activity`
    /// and the stored row's activity are both known and differ, the stored one is kept as an older activity in
    /// `countdown_activity_sessions`. A new token for an older activity replaces that activity's token only. A
    /// registration without an activity id (or over a row without one) replaces the row, as before.
    /// Run it in a transaction: the device's row stays share-locked until the session is written, so the device
    /// cannot be taken over in between.
    public static func register(stream: String, device: String, user: String, token: String, activity: String?,
                                on connection: PostgresConnection) throws -> Registration {
        if let refusal = try DeviceOwnershipQueries.refusal(of: device, userID: user, lock: true, on: connection) { return .refused(refusal) }
        guard try connection.query("SELECT 1 FROM streams WHERE id = $1", [stream]).first != nil else { return .streamMissing }
        if let activity, !activity.isEmpty {
            let stored = try connection.query("""
                SELECT activity_id FROM live_activity_sessions WHERE stream_id = $1 AND device_id = $2 FOR UPDATE
                """, [stream, device]).first?.decode("activity_id", as: String?.self) ?? nil
            if let stored, stored != activity {
                let older = try connection.query("""
                    SELECT 1 FROM countdown_activity_sessions WHERE stream_id = $1 AND device_id = $2 AND activity_id = $3 FOR UPDATE
                    """, [stream, device, activity])
                if !older.isEmpty {
                    try connection.execute("""
                        UPDATE countdown_activity_sessions SET user_id = $4, live_activity_token = $5
                        WHERE stream_id = $1 AND device_id = $2 AND activity_id = $3 AND (user_id, live_activity_token) IS DISTINCT FROM ($4, $5)
                        """, [stream, device, activity, user, token])
                    return .registered
                }
                try connection.execute("""
                    INSERT INTO countdown_activity_sessions (stream_id, device_id, activity_id, user_id, live_activity_token, created_at)
                    SELECT stream_id, device_id, activity_id, user_id, live_activity_token, updated_at FROM live_activity_sessions
                    WHERE stream_id = $1 AND device_id = $2
                    ON CONFLICT (stream_id, device_id, activity_id) DO UPDATE SET
                        user_id = EXCLUDED.user_id, live_activity_token = EXCLUDED.live_activity_token
                    """, [stream, device])
            }
        }
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

    /// Deletes runtime sessions of the user's own device: with `activity`, that activity only (when it was the
    /// newest, the newest older activity takes its place in `live_activity_sessions`); without, every activity of
    /// the device for the stream. Nil when the device is the user's (whether or not it had such a session), the
    /// refusal otherwise.
    public static func removeOwn(stream: String, device: String, user: String, activity: String? = nil,
                                 on connection: PostgresConnection) throws -> DeviceOwnershipQueries.Refusal? {
        if let refusal = try DeviceOwnershipQueries.refusal(of: device, userID: user, lock: false, on: connection) { return refusal }
        guard let activity else {
            try connection.execute("DELETE FROM countdown_activity_sessions WHERE stream_id = $1 AND device_id = $2", [stream, device])
            try connection.execute("DELETE FROM live_activity_sessions WHERE stream_id = $1 AND device_id = $2", [stream, device])
            return nil
        }
        try connection.execute("DELETE FROM countdown_activity_sessions WHERE stream_id = $1 AND device_id = $2 AND activity_id = $3",
                               [stream, device, activity])
        let newest = try connection.query("""
            SELECT 1 FROM live_activity_sessions WHERE stream_id = $1 AND device_id = $2 AND activity_id = $3 FOR UPDATE
            """, [stream, device, activity])
        guard !newest.isEmpty else { return nil }
        if try SessionQueries.promoteOlder(stream, devices: [device], on: connection) == 0 {
            try connection.execute("DELETE FROM live_activity_sessions WHERE stream_id = $1 AND device_id = $2", [stream, device])
        }
        return nil
    }
}
