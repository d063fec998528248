import CountdownDomain
import Postgres

extension StartLedger {
    /// Records the rows of `keys` as sent without a push (`assumed_sent`, reason `restored`: the machine's `restored`
    /// transition): a database restored from a backup does not know the starts sent since, and they must not go out
    /// again (SPEC 12.4). New rows are inserted; existing rows change only from the statuses the table allows (a row
    /// `sent` stays). Returns how many rows it wrote.
    @discardableResult
    public static func assumeSent(_ keys: [Key], on connection: PostgresConnection) throws -> Int {
        guard !keys.isEmpty else { return 0 }
        try check(.restore, writing: [.assumedSent])
        return try connection.execute("""
            INSERT INTO countdown_start_ledger AS l (stream_id, user_id, device_id, status, reason)
            SELECT t.stream_id, t.user_id, t.device_id, $4, 'restored'
            FROM unnest($1::text[], $2::text[], $3::text[]) AS t(stream_id, user_id, device_id)
            ON CONFLICT (stream_id, user_id, device_id) DO UPDATE
                SET status = EXCLUDED.status, reason = EXCLUDED.reason, claimed_by = NULL, claimed_until = NULL, updated_at = now()
                WHERE l.status = ANY($5::text[])
            """, keyArrays(Array(Set(keys)).sorted()) + [Status.assumedSent.rawValue, from(.restore)])
    }
}
