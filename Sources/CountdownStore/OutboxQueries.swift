import CountdownDomain
import Postgres

/// `countdown_outbox`: the changes the schema's triggers recorded, taken in batches by the relays.
public enum OutboxQueries {
    /// Takes up to `limit` of the oldest rows no other relay holds (locked until the transaction ends).
    public static func take(limit: Int, on connection: PostgresConnection) throws -> [OutboxRow] {
        try decode(connection.query("""
            SELECT id, topic, stream_id, user_id, device_id, rescheduled, created_at FROM countdown_outbox
            ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
            """, [limit]))
    }

    /// Takes the row `id` when it is still there and no other relay holds it (locked until the transaction ends).
    public static func take(id: Int64, on connection: PostgresConnection) throws -> [OutboxRow] {
        try decode(connection.query("""
            SELECT id, topic, stream_id, user_id, device_id, rescheduled, created_at FROM countdown_outbox
            WHERE id = $1 FOR UPDATE SKIP LOCKED
            """, [id]))
    }

    /// The ids and streams of up to `limit` of the oldest rows (no lock: for handling a failed batch row by row).
    public static func peek(limit: Int, on connection: PostgresConnection) throws -> [(id: Int64, streamID: String?)] {
        try connection.query("SELECT id, stream_id FROM countdown_outbox ORDER BY id LIMIT $1", [limit]).map { row in
            (try row.decode("id"), try row.decode("stream_id"))
        }
    }

    /// Records a change of the whole stream, as the stream trigger would (plans it again, as rescheduled).
    public static func replanStream(_ streamID: String, on connection: PostgresConnection) throws {
        try connection.execute("SELECT countdown_outbox_write('stream', $1, NULL, NULL, true)", [streamID])
    }

    /// How many rows wait and how old the oldest is, in seconds by PostgreSQL's clock (0 when none wait).
    public static func backlog(on connection: PostgresConnection) throws -> (rows: Int, oldestSeconds: Double) {
        let row = try connection.query("""
            SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM countdown_outbox
            """).first
        return (try row?.decode("n", as: Int.self) ?? 0, try row?.decode("age", as: Double.self) ?? 0)
    }

    private static func decode(_ rows: PostgresRows) throws -> [OutboxRow] {
        try rows.map { row in
            OutboxRow(id: try row.decode("id"), topic: OutboxRow.Topic(rawValue: try row.decode("topic")) ?? .stream,
                      streamID: try row.decode("stream_id"), userID: try row.decode("user_id"), deviceID: try row.decode("device_id"),
                      rescheduled: try row.decode("rescheduled"), createdAt: try row.decode("created_at"))
        }
    }

    /// Deletes relayed rows.
    public static func delete(_ ids: [Int64], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.execute("DELETE FROM countdown_outbox WHERE id = ANY($1::bigint[])", [PostgresTextArray(ids.map(String.init))])
    }
}
