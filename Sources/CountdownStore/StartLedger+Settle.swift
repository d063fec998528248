import CountdownDomain
import Postgres

extension StartLedger {
    /// Writes push outcomes back to their rows, one statement for all. An outcome lands only on the claim it
    /// answers: a row its owner still holds (`sending`, claimed by `owner`, the claimed generation). A late outcome
    /// of a sender declared dead (another took the row over) or of an earlier generation (the row was opened again
    /// for a new activity) changes nothing, nor does an outcome whose status the machine's table does not allow
    /// for a settlement: each comes back refused, none stops the others.
    @discardableResult
    public static func settle(_ unordered: [Settlement], on connection: PostgresConnection) throws -> [Refused] {
        var refused: [Refused] = []
        // In key order, as every writer of ledger rows locks them, so two fan-outs cannot deadlock.
        var settlements: [Settlement] = []
        for settlement in unordered.sorted(by: { $0.key < $1.key }) {
            if writes(.settle, settlement.status) {
                settlements.append(settlement)
            } else {
                refused.append(Refused(settlement: settlement, error: StoreError(
                    .refused, context: "start ledger: an outcome may not write status \(settlement.status.rawValue) (\(settlement.key))")))
            }
        }
        guard !settlements.isEmpty else { return refused }
        // Each row is found by its primary key. Planned for a batch's real size (the first executions of the
        // prepared statement on a session, or every one when statements are not prepared), a few hundred rows
        // make the planner hash the whole ledger instead (a sequential scan of every stream's rows); so hash and
        // merge joins are off for this statement only, and the session's settings are put back after it.
        let previous = try connection.query("""
            SELECT s.hash, s.merge, set_config('enable_hashjoin', 'off', true) AS h, set_config('enable_mergejoin', 'off', true) AS m
            FROM (SELECT current_setting('enable_hashjoin') AS hash, current_setting('enable_mergejoin') AS merge OFFSET 0) AS s
            """).first
        let written = Set(try connection.query("""
            UPDATE countdown_start_ledger l
            SET status = t.status, reason = t.reason, message_name = coalesce(t.name, l.message_name),
                claimed_until = NULL, updated_at = now(),
                sent_at = CASE WHEN t.status = 'sent' THEN now() ELSE l.sent_at END,
                token_hash = coalesce(t.token_hash, l.token_hash)
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
                AS t(stream_id, user_id, device_id, status, reason, name, token_hash, owner, generation)
            WHERE l.stream_id = t.stream_id AND l.user_id = t.user_id AND l.device_id = t.device_id
              AND l.status = ANY($10::text[]) AND l.claimed_by IS NOT DISTINCT FROM t.owner AND l.generation = t.generation::integer
            RETURNING l.stream_id, l.user_id, l.device_id
            """, keyArrays(settlements.map(\.key)) + [
                PostgresTextArray(settlements.map(\.status.rawValue)),
                PostgresTextArray(settlements.map(\.reason)),
                PostgresTextArray(settlements.map(\.name)),
                PostgresTextArray(settlements.map(\.tokenHash)),
                PostgresTextArray(settlements.map(\.owner)),
                PostgresTextArray(settlements.map { String($0.claim.generation) }),
                from(.settle),
            ]).map(key))
        if let previous {
            try connection.execute("SELECT set_config('enable_hashjoin', $1, true), set_config('enable_mergejoin', $2, true)",
                                   [try previous.decode("hash", as: String.self), try previous.decode("merge", as: String.self)])
        }
        for settlement in settlements where !written.contains(settlement.key) {
            refused.append(Refused(settlement: settlement, error: StoreError(
                .refused, context: "start ledger: \(settlement.key) generation \(settlement.claim.generation) is no longer held by "
                    + "\(settlement.owner ?? "this sender") (taken over, settled or opened again)")))
        }
        return refused
    }
}
