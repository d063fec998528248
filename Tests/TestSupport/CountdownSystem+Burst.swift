import Postgres

extension CountdownSystem {
    /// `count` streams `s1…` starting in `seconds`, each created by its own user `u…` with one iOS device `d…`
    /// holding both tokens (`fcm-d…` and a hex push-to-start token). With `spread`, the planned starts are spread
    /// evenly over that many seconds from then (`s1` first), so the burst lasts at least that long on the
    /// database's clock however fast the workers are.
    public func burst(_ count: Int, startsIn seconds: Int, spread: Int = 0) async throws {
        try await db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(1, $1) i", [count])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                SELECT 'd' || i, 'u' || i, 'ios', 'fcm-d' || i, md5('pts' || i) FROM generate_series(1, $1) i
                """, [count])
            try connection.execute("""
                INSERT INTO streams (id, title, planned_start_at) SELECT 's' || i, 'Stream ' || i,
                    now() + make_interval(secs => $2::float8 + $3::float8 * (i - 1) / $1::int)
                FROM generate_series(1, $1::int) i
                """, [count, seconds, spread])
            try connection.execute("""
                INSERT INTO stream_participants (stream_id, user_id, role) SELECT 's' || i, 'u' || i, 'creator' FROM generate_series(1, $1) i
                """, [count])
        }
    }
}
