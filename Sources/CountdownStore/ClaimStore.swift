import Postgres

/// The start-ledger rows one worker holds.
public enum ClaimStore {
    /// A ledger row's key.
    public struct Row: Sendable, Hashable {
        public var stream: String
        public var user: String
        public var device: String

        public init(stream: String, user: String, device: String) {
            self.stream = stream
            self.user = user
            self.device = device
        }
    }

    /// In one transaction: extends `held` (the rows `owner` is sending or recording now) to `seconds` from now, so
    /// a fan-out or a settlement that takes long never lets another sender take them; then gives back to `pending`
    /// the rows of `releasing` (rows `owner` claimed but will not push: the transaction that claimed them failed,
    /// perhaps after its commit went through) that are still claimed by `owner` and whose claim expired. Rows
    /// locked by a settlement in progress are skipped. Returns how many rows were extended and released, and the
    /// rows of `releasing` still claimed by `owner` that were not released (their claim has not expired yet).
    ///
    /// The ledger has no index on the owner (an index on a column a settlement changes would make every settlement
    /// write a new index entry), so a worker names the rows it gives back instead of searching for them.
    @discardableResult
    public static func keepAlive(owner: String, held: [Row], releasing: [Row] = [], seconds: Int,
                                 on connection: PostgresConnection) throws -> (extended: Int, released: Int, waiting: [Row]) {
        let rows = held.sorted { ($0.stream, $0.user, $0.device) < ($1.stream, $1.user, $1.device) }
        var extended = 0
        if !rows.isEmpty {
            extended = try connection.execute("""
                UPDATE countdown_start_ledger l SET claimed_until = now() + make_interval(secs => $2)
                FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                      JOIN unnest($3::text[], $4::text[], $5::text[]) AS t(stream_id, user_id, device_id)
                        ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
                      WHERE c.claimed_by = $1 AND c.status = 'sending'
                      ORDER BY 1, 2, 3 FOR UPDATE OF c SKIP LOCKED) AS k
                WHERE l.stream_id = k.stream_id AND l.user_id = k.user_id AND l.device_id = k.device_id
                """, [owner, seconds] + keyArrays(rows))
        }
        guard !releasing.isEmpty else { return (extended, 0, []) }
        let given = releasing.sorted { ($0.stream, $0.user, $0.device) < ($1.stream, $1.user, $1.device) }
        let released = try connection.execute("""
            UPDATE countdown_start_ledger l SET status = 'pending', claimed_by = NULL, claimed_until = NULL, updated_at = now()
            FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                  JOIN unnest($2::text[], $3::text[], $4::text[]) AS t(stream_id, user_id, device_id)
                    ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
                  WHERE c.claimed_by = $1 AND c.status = 'sending' AND c.claimed_until < now()
                  ORDER BY 1, 2, 3 FOR UPDATE OF c SKIP LOCKED) AS k
            WHERE l.stream_id = k.stream_id AND l.user_id = k.user_id AND l.device_id = k.device_id
            """, [owner] + keyArrays(given))
        let waiting = try connection.query("""
            SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
            JOIN unnest($2::text[], $3::text[], $4::text[]) AS t(stream_id, user_id, device_id)
              ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
            WHERE c.claimed_by = $1 AND c.status = 'sending'
            """, [owner] + keyArrays(given)).map {
            Row(stream: try $0.decode("stream_id"), user: try $0.decode("user_id"), device: try $0.decode("device_id"))
        }
        return (extended, released, waiting)
    }

    private static func keyArrays(_ rows: [Row]) -> [(any PostgresEncodable)?] {
        [PostgresTextArray(rows.map(\.stream)), PostgresTextArray(rows.map(\.user)), PostgresTextArray(rows.map(\.device))]
    }
}
