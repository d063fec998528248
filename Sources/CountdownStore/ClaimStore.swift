import Postgres

/// The claims one worker holds across the start ledger and the session end claims.
public enum ClaimStore {
    /// Extends every claim `owner` holds (start-ledger rows being sent, session end claims) to `seconds` from now:
    /// while the worker lives, its claims do not expire, however long its fan-outs or a settlement take.
    /// Rows locked by a settlement in progress are skipped (they are about to leave the claim). Returns how many
    /// claims were extended.
    @discardableResult
    public static func extend(owner: String, seconds: Int, on connection: PostgresConnection) throws -> Int {
        let ledger = try connection.execute("""
            UPDATE countdown_start_ledger l SET claimed_until = now() + make_interval(secs => $2)
            FROM (SELECT stream_id, user_id, device_id FROM countdown_start_ledger
                  WHERE claimed_by = $1 AND status = 'sending' FOR UPDATE SKIP LOCKED) AS c
            WHERE l.stream_id = c.stream_id AND l.user_id = c.user_id AND l.device_id = c.device_id
            """, [owner, seconds])
        let sessions = try connection.execute("""
            UPDATE countdown_session_end_claims e SET claimed_until = now() + make_interval(secs => $2)
            FROM (SELECT stream_id, device_id FROM countdown_session_end_claims WHERE claimed_by = $1 FOR UPDATE SKIP LOCKED) AS c
            WHERE e.stream_id = c.stream_id AND e.device_id = c.device_id
            """, [owner, seconds])
        return ledger + sessions
    }
}
