import Postgres

extension StreamQueries {
    /// What decides whether `user` may cancel the stream, in one statement: whether the user is in `users`, whether
    /// the stream exists, and whether the user is its creator.
    public static func cancelRights(_ stream: String, user: String, on connection: PostgresConnection) throws
        -> (userKnown: Bool, streamKnown: Bool, isCreator: Bool) {
        let row = try connection.query("""
            SELECT EXISTS (SELECT 1 FROM users WHERE id = $2) AS user_known,
                   EXISTS (SELECT 1 FROM streams WHERE id = $1) AS stream_known,
                   EXISTS (SELECT 1 FROM stream_participants
                           WHERE stream_id = $1 AND user_id = $2 AND role = 'creator') AS is_creator
            """, [stream, user]).first
        return (try row?.decode("user_known", as: Bool.self) ?? false, try row?.decode("stream_known", as: Bool.self) ?? false,
                try row?.decode("is_creator", as: Bool.self) ?? false)
    }
}
