import CountdownDomain
import Postgres

/// `viewerCount` of the Live Activity payloads: the people waiting for a stream, counted when the push is
/// built: its participants and the users with a reminder that is not cancelled (a reminder already sent still
/// counts: its user still waits), each person once.
public enum ViewerCountQuery {
    /// Each person once without a `DISTINCT` over them: a user has at most one reminder per stream and one
    /// participant row, so the count is the reminders not cancelled plus the participants without such a reminder.
    /// (`count(DISTINCT user_id)` over both sorted every waiting user's id by the column's collation: twice the
    /// CPU, 26 ms for a stream with 100,000 reminders, on each start page of that stream.)
    public static func load(_ streamIDs: [String], on connection: PostgresConnection) throws -> [String: Int] {
        guard !streamIDs.isEmpty else { return [:] }
        var counts: [String: Int] = [:]
        for row in try connection.query("""
            SELECT s.id AS stream_id,
                   (SELECT count(*) FROM stream_reminders r WHERE r.stream_id = s.id AND r.status IN ('active', 'sent'))
                   + (SELECT count(*) FROM stream_participants p
                      WHERE p.stream_id = s.id AND NOT EXISTS (
                          SELECT 1 FROM stream_reminders r
                          WHERE r.stream_id = p.stream_id AND r.user_id = p.user_id AND r.status IN ('active', 'sent'))) AS n
            FROM unnest($1::text[]) AS s(id)
            """, [PostgresTextArray(streamIDs)]) {
            let count = try row.decode("n", as: Int.self)
            if count > 0 { counts[try row.decode("stream_id", as: String.self)] = count }
        }
        return counts
    }

    /// Sets `viewerCount` on each loaded stream.
    public static func fill(_ rows: inout [String: StreamSnapshotRow], on connection: PostgresConnection) throws {
        let counts = try load(Array(rows.keys), on: connection)
        for id in rows.keys { rows[id]?.viewerCount = counts[id] ?? 0 }
    }
}
