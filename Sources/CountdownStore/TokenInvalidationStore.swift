import CountdownDomain
import Foundation
import Postgres

/// `countdown_token_invalidations`: the tokens the worker cleared, listed and put back (`countdown-admin tokens`,
/// the console's tokens page). Values come back as stored; readers redact them.
public enum TokenInvalidationStore {
    public struct RestoreReport: Sendable, Codable, Equatable {
        /// Tokens put back, by kind (`fcm`, `push_to_start`, `runtime`).
        public var restored: [String: Int]
        /// Cleared tokens left alone because the device (or session) holds another token now, or is gone.
        public var skippedChanged: Int
        public var restoredTotal: Int { restored.values.reduce(0, +) }
    }

    /// Cleared tokens since `since` (only those cleared for `reason`, when given), oldest first.
    public static func list(since: TimeCutoff, reason: String?, limit: Int, on connection: PostgresConnection) throws -> [TokenInvalidation] {
        try connection.query("""
            SELECT \(TokenInvalidation.columns)
            FROM countdown_token_invalidations
            WHERE invalidated_at >= \(TimeCutoff.sql) AND ($3::text IS NULL OR reason = $3)
            ORDER BY invalidated_at, id LIMIT $4
            """, since.parameters + [reason, limit]).map(TokenInvalidation.init(row:))
    }

    /// Puts back every token cleared since `since` (for `reason`, when given) and not restored yet, where the
    /// device's column is still empty (a push-to-start or FCM token) or the stream has no session for the device
    /// (a runtime token); the latest clearing of a device's token wins. Marks the entries restored. Run it in a
    /// transaction.
    public static func restore(since: TimeCutoff, reason: String?, on connection: PostgresConnection) throws -> RestoreReport {
        let filter = since.parameters + [reason]
        let candidates = """
            SELECT DISTINCT ON (device_id, token_kind, coalesce(stream_id, '')) *
            FROM countdown_token_invalidations
            WHERE invalidated_at >= \(TimeCutoff.sql) AND ($3::text IS NULL OR reason = $3) AND restored_at IS NULL
            ORDER BY device_id, token_kind, coalesce(stream_id, ''), invalidated_at DESC, id DESC
            """
        let considered = try connection.query("SELECT count(*) AS n FROM (\(candidates)) AS c", filter)
            .first?.decode("n", as: Int.self) ?? 0
        // Devices are locked in id order, as every batch writer does.
        _ = try connection.query("""
            SELECT 1 FROM devices WHERE device_id IN (SELECT device_id FROM (\(candidates)) AS c) ORDER BY device_id FOR UPDATE
            """, filter)
        var restored: [String: Int] = [:]
        var reopen: [(device: String, stream: String)] = []
        for (kind, statement) in restoreStatements {
            let rows = try connection.query("WITH c AS (\(candidates)) " + statement, filter)
            let ids = try rows.map { try $0.decode("id", as: Int.self) }
            guard !ids.isEmpty else { continue }
            restored[kind.rawValue] = ids.count
            if kind != .runtime {
                reopen += try rows.compactMap { row in
                    try row.decode("stream_id", as: String?.self).map { (try row.decode("device_id", as: String.self), $0) }
                }
            }
            try connection.execute("""
                UPDATE countdown_token_invalidations SET restored_at = now(), restore_reason = 'countdown-admin tokens restore'
                WHERE id = ANY($1::bigint[])
                """, [PostgresTextArray(ids.map(String.init))])
        }
        try StartLedger.forgetTokens(reopen, on: connection)
        return RestoreReport(restored: restored, skippedChanged: considered - restored.values.reduce(0, +))
    }

    /// Per kind: the statement that puts the candidates `c` back and returns the ids of the entries it restored.
    private static let restoreStatements: [(TargetToken, String)] = [
        (.fcm, """
            UPDATE devices d SET fcm_token = c.old_value FROM c
            WHERE c.token_kind = 'fcm' AND d.device_id = c.device_id AND d.fcm_token IS NULL
            RETURNING c.id, c.device_id, c.stream_id
            """),
        (.pushToStart, """
            UPDATE devices d SET push_to_start_token = c.old_value FROM c
            WHERE c.token_kind = 'push_to_start' AND d.device_id = c.device_id AND d.push_to_start_token IS NULL
            RETURNING c.id, c.device_id, c.stream_id
            """),
        (.runtime, """
            , inserted AS (
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token, activity_id)
                SELECT c.stream_id, c.device_id, u.id, c.old_value, c.activity_id FROM c
                JOIN streams s ON s.id = c.stream_id
                JOIN devices d ON d.device_id = c.device_id
                LEFT JOIN users u ON u.id = c.user_id
                WHERE c.token_kind = 'runtime'
                ON CONFLICT (stream_id, device_id) DO NOTHING
                RETURNING stream_id, device_id)
            SELECT c.id FROM c JOIN inserted i ON i.stream_id = c.stream_id AND i.device_id = c.device_id WHERE c.token_kind = 'runtime'
            """),
    ]
}
