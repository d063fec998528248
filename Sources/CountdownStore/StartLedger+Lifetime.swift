import CountdownDomain
import Postgres

/// Rows opened again: for the next activity lifetime, or for tokens put back.
extension StartLedger {
    /// Opens again, as the next generation, the `sent` ledger rows of `streams` whose push-to-start went out more
    /// than `lifetimeSeconds` before the stream's planned start (`StartLedgerMachine`'s `outlived` transition), and
    /// retires those devices' sessions of the stream (`RetiredSessionQueries.retireOutlived`). Rows of Android devices are
    /// left alone: the Android countdown has no 8-hour life and is started once per device and stream (SPEC 10.4).
    /// Returns the (stream, device) pairs reopened.
    @discardableResult
    public static func reopenOutlived(_ streams: [String], lifetimeSeconds: Int, on connection: PostgresConnection) throws
        -> [(stream: String, device: String)] {
        guard !streams.isEmpty else { return [] }
        try check(.outlive, writing: [.pending])
        let reopened = try connection.query("""
            UPDATE countdown_start_ledger l SET status = 'pending', generation = l.generation + 1, reason = NULL, claimed_by = NULL,
                claimed_until = NULL, updated_at = now()
            FROM streams s
            WHERE l.stream_id = ANY($1::text[]) AND s.id = l.stream_id AND l.status = ANY($3::text[])
              AND l.sent_at < s.planned_start_at - make_interval(secs => $2)
              AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.device_id = l.device_id AND d.platform = 'android')
            RETURNING l.stream_id, l.device_id
            """, [PostgresTextArray(streams.sorted()), lifetimeSeconds, from(.outlive)]).map { row in
            (stream: try row.decode("stream_id", as: String.self), device: try row.decode("device_id", as: String.self))
        }
        for stream in Set(reopened.map(\.stream)).sorted() {
            try RetiredSessionQueries.retireOutlived(stream, devices: reopened.filter { $0.stream == stream }.map(\.device), on: connection)
        }
        return reopened
    }

    /// A start that failed because of a token now restored may go out again: its ledger row forgets the tokens it
    /// failed with, so the device's next backfill (queued by the token change itself) reopens and sends it while
    /// the stream's start window is open.
    static func forgetTokens(_ pairs: [(device: String, stream: String)], on connection: PostgresConnection) throws {
        guard !pairs.isEmpty else { return }
        try connection.execute("""
            UPDATE countdown_start_ledger l SET token_hash = NULL, updated_at = now()
            FROM unnest($1::text[], $2::text[]) AS t(device_id, stream_id)
            WHERE l.device_id = t.device_id AND l.stream_id = t.stream_id AND l.status = 'failed' AND l.reason LIKE 'dead_token:%'
            """, [PostgresTextArray(pairs.map(\.device)), PostgresTextArray(pairs.map(\.stream))])
    }
}
