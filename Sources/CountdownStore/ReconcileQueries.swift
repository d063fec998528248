import Postgres

/// The streams the reconciler checks: scheduled ones not long past expiry, and ended ones with sessions left (or a
/// broadcast channel still in use: its activities have had no end).
public enum ReconcileQueries {
    private static let candidate = """
        ((s.status = 'scheduled' AND s.planned_start_at + make_interval(secs => $1) > now() - interval '1 day')
         OR (s.status <> 'scheduled' AND (EXISTS (SELECT 1 FROM live_activity_sessions l WHERE l.stream_id = s.id)
                                          OR EXISTS (SELECT 1 FROM countdown_activity_sessions a WHERE a.stream_id = s.id)
                                          OR \(BroadcastChannels.inUseCondition))))
        """

    /// How many streams a full run checks.
    public static func count(expireAfter: Int, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) AS n FROM streams s WHERE \(candidate)", [expireAfter])
            .first?.decode("n", as: Int.self) ?? 0
    }

    /// The next `limit` stream ids after `cursor`, in id order.
    public static func page(after cursor: String, limit: Int, expireAfter: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT s.id FROM streams s WHERE \(candidate) AND s.id > $2 ORDER BY s.id LIMIT $3",
                             [expireAfter, cursor, limit]).map { try $0.decode("id", as: String.self) }
    }

    /// Scheduled streams inside their start window with an eligible device that has no start yet (no ledger row,
    /// a pending or skipped one, a claim that expired, or a dead token since replaced).
    public static func streamsWithUnstartedDevices(_ ids: [String], on connection: PostgresConnection) throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try connection.query("""
            SELECT DISTINCT p.stream_id FROM stream_participants p
            JOIN streams s ON s.id = p.stream_id
            JOIN countdown_stream_progress g ON g.stream_id = s.id AND g.start_done_for = s.planned_start_at
            JOIN devices d ON d.user_id = p.user_id
            LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
            LEFT JOIN countdown_start_ledger l ON l.stream_id = p.stream_id AND l.user_id = p.user_id AND l.device_id = d.device_id
            WHERE p.stream_id = ANY($1::text[]) AND s.status = 'scheduled' AND s.planned_start_at > now()
              AND d.platform = 'ios' AND coalesce(d.push_to_start_token, '') <> '' AND coalesce(d.fcm_token, '') <> ''
              AND coalesce(np.enabled, true)
              AND (l.status IS NULL OR l.status IN ('pending', 'skipped')
                   OR (l.status = 'sending' AND l.claimed_until < now())
                   OR (l.status = 'failed' AND l.reason LIKE 'dead_token:%'
                       AND l.token_hash IS DISTINCT FROM md5(coalesce(d.fcm_token, '') || ':' || d.push_to_start_token)))
            """, [PostgresTextArray(ids)]).map { try $0.decode("stream_id", as: String.self) }
    }
}
