import CountdownDomain
import Postgres

/// `countdown_outbox`: the changes the schema's triggers recorded, taken in batches by the relays.
public enum OutboxStore {
    /// Takes up to `limit` of the oldest rows no other relay holds (locked until the transaction ends).
    public static func take(limit: Int, on connection: PostgresConnection) throws -> [OutboxRow] {
        try connection.query("""
            SELECT id, topic, stream_id, user_id, device_id, rescheduled, created_at FROM countdown_outbox
            ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
            """, [limit]).map { row in
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
