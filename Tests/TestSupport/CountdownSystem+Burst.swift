import Postgres

extension CountdownSystem {
    /// `count` streams `s1…` starting in `seconds`, each created by its own user `u…` with one iOS device `d…`
    /// holding both tokens (`fcm-d…` and a hex push-to-start token).
    public func burst(_ count: Int, startsIn seconds: Int) async throws {
        try await db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(1, $1) i", [count])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                SELECT 'd' || i, 'u' || i, 'ios', 'fcm-d' || i, md5('pts' || i) FROM generate_series(1, $1) i
                """, [count])
            try connection.execute("""
                INSERT INTO streams (id, title, planned_start_at) SELECT 's' || i, 'Stream ' || i, now() + make_interval(secs => $2)
                FROM generate_series(1, $1) i
                """, [count, seconds])
            try connection.execute("""
                INSERT INTO stream_participants (stream_id, user_id, role) SELECT 's' || i, 'u' || i, 'creator' FROM generate_series(1, $1) i
                """, [count])
        }
    }
}
