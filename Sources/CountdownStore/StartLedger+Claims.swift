import CountdownDomain
import Postgres

/// Who sends a row: claims taken, kept alive, given back, and what the fan-out asks about them.
extension StartLedger {
    /// Takes up to `limit` of the scope's pending rows for `owner`, in key order, and rows being sent whose owner
    /// is among `owners.dead` (its heartbeat is gone), or whose claim expired and whose owner is not among
    /// `owners.alive` (a living worker keeps its claims even while it cannot extend them).
    public static func claim(_ streams: [String], scope: FanoutScope, seconds: Int, owner: String? = nil,
                             owners: (dead: [String], alive: [String]) = ([], []), limit: Int = 1_000_000,
                             on connection: PostgresConnection) throws -> [Claim] {
        try check(.claim, writing: [.sending])
        var filter = ""
        var parameters: [(any PostgresEncodable)?] = [PostgresTextArray(streams), seconds, owner, PostgresTextArray(owners.dead), limit,
                                                      PostgresTextArray(owners.alive), from(.claim)]
        narrow(&filter, &parameters, to: scope, device: "device_id", user: "user_id")
        return try connection.query("""
            UPDATE countdown_start_ledger l
            SET status = 'sending', claimed_until = now() + make_interval(secs => $2), claimed_by = $3,
                attempts = l.attempts + 1, updated_at = now()
            FROM (SELECT stream_id, user_id, device_id FROM countdown_start_ledger
                  WHERE stream_id = ANY($1::text[]) AND status = ANY($7::text[])
                    AND (status <> 'sending' OR claimed_by = ANY($4::text[])
                         OR (claimed_until < now() AND (claimed_by = ANY($6::text[])) IS NOT TRUE))\(filter)
                  ORDER BY stream_id, user_id, device_id LIMIT $5
                  FOR UPDATE SKIP LOCKED) AS c
            WHERE l.stream_id = c.stream_id AND l.user_id = c.user_id AND l.device_id = c.device_id
            RETURNING l.stream_id, l.user_id, l.device_id, l.generation
            """, parameters).map(claimed)
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
    public static func keepClaims(owner: String, held: [Key], releasing: [Key] = [], seconds: Int,
                                  on connection: PostgresConnection) throws -> (extended: Int, released: Int, waiting: [Key]) {
        try check(.extend, writing: [.sending])
        try check(.release, writing: [.pending])
        var extended = 0
        if !held.isEmpty {
            extended = try connection.execute("""
                UPDATE countdown_start_ledger l SET claimed_until = now() + make_interval(secs => $2)
                FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                      JOIN unnest($3::text[], $4::text[], $5::text[]) AS t(stream_id, user_id, device_id)
                        ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
                      WHERE c.claimed_by = $1 AND c.status = ANY($6::text[])
                      ORDER BY 1, 2, 3 FOR UPDATE OF c SKIP LOCKED) AS k
                WHERE l.stream_id = k.stream_id AND l.user_id = k.user_id AND l.device_id = k.device_id
                """, [owner, seconds] + keyArrays(held.sorted()) + [from(.extend)])
        }
        guard !releasing.isEmpty else { return (extended, 0, []) }
        let given = keyArrays(releasing.sorted())
        let released = try connection.execute("""
            UPDATE countdown_start_ledger l SET status = 'pending', claimed_by = NULL, claimed_until = NULL, updated_at = now()
            FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                  JOIN unnest($2::text[], $3::text[], $4::text[]) AS t(stream_id, user_id, device_id)
                    ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
                  WHERE c.claimed_by = $1 AND c.status = ANY($5::text[]) AND c.claimed_until < now()
                  ORDER BY 1, 2, 3 FOR UPDATE OF c SKIP LOCKED) AS k
            WHERE l.stream_id = k.stream_id AND l.user_id = k.user_id AND l.device_id = k.device_id
            """, [owner] + given + [from(.release)])
        let waiting = try connection.query("""
            SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
            JOIN unnest($2::text[], $3::text[], $4::text[]) AS t(stream_id, user_id, device_id)
              ON c.stream_id = t.stream_id AND c.user_id = t.user_id AND c.device_id = t.device_id
            WHERE c.claimed_by = $1 AND c.status = 'sending'
            """, [owner] + given).map(key)
        return (extended, released, waiting)
    }

    /// The workers (other than `except`) holding rows of `streams` being sent, and which of `streams` have ledger
    /// rows at all, in one read: the claim asks which owners are alive before it runs, and `recordTargets` need not
    /// read again the rows of a stream that had none (`withoutRows`).
    public static func ledgerOwners(_ streams: [String], except: String?, on connection: PostgresConnection) throws
        -> (owners: [String], streamsWithRows: Set<String>) {
        var owners = Set<String>()
        var streamsWithRows = Set<String>()
        for row in try connection.query("""
            SELECT DISTINCT stream_id,
                   CASE WHEN status = 'sending' AND claimed_by IS DISTINCT FROM $2 THEN claimed_by END AS owner
            FROM countdown_start_ledger WHERE stream_id = ANY($1::text[])
            """, [PostgresTextArray(streams), except]) {
            streamsWithRows.insert(try row.decode("stream_id", as: String.self))
            if let owner = try row.decode("owner", as: String?.self) { owners.insert(owner) }
        }
        return (owners.sorted(), streamsWithRows)
    }

    /// Rows currently claimed (ours included) per stream: unexpired claims and claims of `owners.alive`, not those
    /// of `owners.dead`.
    public static func openClaims(_ streams: [String], owners: (dead: [String], alive: [String]) = ([], []),
                                  on connection: PostgresConnection) throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: try connection.query("""
            SELECT stream_id, count(*) AS open FROM countdown_start_ledger
            WHERE stream_id = ANY($1::text[]) AND status = 'sending'
              AND (claimed_until > now() OR claimed_by = ANY($3::text[])) AND (claimed_by = ANY($2::text[])) IS NOT TRUE
            GROUP BY stream_id
            """, [PostgresTextArray(streams), PostgresTextArray(owners.dead), PostgresTextArray(owners.alive)]).map { row in
            (try row.decode("stream_id", as: String.self), try row.decode("open", as: Int.self))
        })
    }

    /// Streams among `streams` with ledger rows still pending or being sent.
    public static func streamsWithOpenRows(_ streams: [String], on connection: PostgresConnection) throws -> Set<String> {
        Set(try connection.query("""
            SELECT DISTINCT stream_id FROM countdown_start_ledger
            WHERE stream_id = ANY($1::text[]) AND status IN ('pending', 'sending')
            """, [PostgresTextArray(streams)]).map { try $0.decode("stream_id", as: String.self) })
    }
}
