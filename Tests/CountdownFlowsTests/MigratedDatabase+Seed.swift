import Postgres

extension MigratedDatabase {
    /// Stream `stream`, planned 30 minutes ahead, with `participants` in this order: each user named after its id in
    /// capitals and owning iOS devices whose tokens are `fcm-<device>` and `pts-<device>`.
    static func seedStream(_ stream: String, _ participants: [(user: String, role: String, devices: [String])],
                           on connection: PostgresConnection) throws {
        let users = participants.map(\.user)
        let owned = participants.flatMap { participant in participant.devices.map { (participant.user, $0) } }
        try connection.execute("INSERT INTO users (id, display_name) SELECT u, upper(u) FROM unnest($1::text[]) AS t(u)",
                               [PostgresTextArray(users)])
        try connection.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
            SELECT d, u, 'ios', 'fcm-' || d, 'pts-' || d FROM unnest($1::text[], $2::text[]) AS t(d, u)
            """, [PostgresTextArray(owned.map(\.1)), PostgresTextArray(owned.map(\.0))])
        try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, upper($1), now() + interval '30 minutes')",
                               [stream])
        try connection.execute("""
            INSERT INTO stream_participants (stream_id, user_id, role) SELECT $1, u, r FROM unnest($2::text[], $3::text[]) AS t(u, r)
            """, [stream, PostgresTextArray(users), PostgresTextArray(participants.map(\.role))])
    }
}
