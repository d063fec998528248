import CountdownDomain
import Postgres

/// `viewerCount` of the Live Activity payloads: the people waiting for a stream, counted when the push is
/// built: its participants and the users with a reminder that is not cancelled (a reminder already sent still
/// counts: its user still waits), each person once.
public enum ViewerCountQuery {
    public static func load(_ streamIDs: [String], on connection: PostgresConnection) throws -> [String: Int] {
        guard !streamIDs.isEmpty else { return [:] }
        var counts: [String: Int] = [:]
        for row in try connection.query("""
            SELECT stream_id, count(DISTINCT user_id) AS n FROM (
                SELECT stream_id, user_id FROM stream_participants WHERE stream_id = ANY($1::text[])
                UNION ALL
                SELECT stream_id, user_id FROM stream_reminders WHERE stream_id = ANY($1::text[]) AND status IN ('active', 'sent')
            ) AS waiting GROUP BY stream_id
            """, [PostgresTextArray(streamIDs)]) {
            counts[try row.decode("stream_id", as: String.self)] = try row.decode("n", as: Int.self)
        }
        return counts
    }

    /// Sets `viewerCount` on each loaded stream.
    public static func fill(_ rows: inout [String: StreamSnapshotRow], on connection: PostgresConnection) throws {
        let counts = try load(Array(rows.keys), on: connection)
        for id in rows.keys { rows[id]?.viewerCount = counts[id] ?? 0 }
    }
}
