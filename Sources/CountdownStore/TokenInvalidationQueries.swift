import CountdownDomain
import Foundation
import Postgres

/// `countdown_token_invalidations`: the tokens the worker cleared, listed and put back (`countdown-admin tokens`,
/// the console's tokens page). Values come back as stored; readers redact them.
public enum TokenInvalidationQueries {
    public struct RestoreReport: Sendable, Codable, Equatable {
        public init(restored: [String: Int], skippedChanged: Int, overLimit: Int? = nil) {
            self.restored = restored
            self.skippedChanged = skippedChanged
            self.overLimit = overLimit
        }

        /// Tokens put back, by kind (`fcm`, `push_to_start`, `runtime`).
        public var restored: [String: Int]
        /// Cleared tokens left alone because the device (or session) holds another token now, has another owner, or is gone.
        public var skippedChanged: Int
        /// When the restore was refused for being over its limit: how many tokens it would have put back.
        public var overLimit: Int?
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

    /// The entries a restore since `since` (for `reason`, when given) would put back now: the latest clearing of
    /// each device token (per stream for a runtime token) not restored yet, where the device still has the owner it
    /// had when the token was cleared and the column is still empty (a push-to-start or FCM token), or the stream
    /// exists and has no session for the device (a runtime token). An entry that recorded no owner is left alone.
    public static func restorable(since: TimeCutoff, reason: String?, on connection: PostgresConnection) throws -> [Int] {
        try connection.query("WITH c AS (\(candidates)) \(restorableIDs)", since.parameters + [reason]).map { try $0.decode("id", as: Int.self) }
    }

    /// Puts back what `restorable` lists and marks those entries restored; nothing when they are more than `limit`
    /// (the report then says how many). Run it in a transaction: the devices are locked first, so the entries
    /// counted are the entries restored.
    public static func restore(since: TimeCutoff, reason: String?, limit: Int? = nil, on connection: PostgresConnection) throws -> RestoreReport {
        let filter = since.parameters + [reason]
        let considered = try connection.query("SELECT count(*) AS n FROM (\(candidates)) AS c", filter)
            .first?.decode("n", as: Int.self) ?? 0
        // Devices are locked in id order, as every batch writer does.
        _ = try connection.query("""
            SELECT 1 FROM devices WHERE device_id IN (SELECT device_id FROM (\(candidates)) AS c) ORDER BY device_id FOR UPDATE
            """, filter)
        let ids = try restorable(since: since, reason: reason, on: connection)
        if let limit, ids.count > limit {
            return RestoreReport(restored: [:], skippedChanged: 0, overLimit: ids.count)
        }
        let chosen = filter + [PostgresTextArray(ids.map(String.init))]
        var restored: [String: Int] = [:]
        var reopen: [(device: String, stream: String)] = []
        for (kind, statement) in restoreStatements {
            let rows = try connection.query("WITH c AS (SELECT * FROM (\(candidates)) AS latest WHERE id = ANY($4::bigint[])) " + statement, chosen)
            let done = try rows.map { try $0.decode("id", as: Int.self) }
            guard !done.isEmpty else { continue }
            restored[kind.rawValue] = done.count
            if kind != .runtime {
                reopen += try rows.compactMap { row in
                    try row.decode("stream_id", as: String?.self).map { (try row.decode("device_id", as: String.self), $0) }
                }
            }
            try connection.execute("""
                UPDATE countdown_token_invalidations SET restored_at = now(), restore_reason = 'countdown-admin tokens restore'
                WHERE id = ANY($1::bigint[])
                """, [PostgresTextArray(done.map(String.init))])
        }
        try StartLedger.forgetTokens(reopen, on: connection)
        return RestoreReport(restored: restored, skippedChanged: considered - restored.values.reduce(0, +))
    }

    /// The latest clearing of each device's token (of each session's, for a runtime token) since $1/$2, for
    /// reason $3 when not null, not restored yet.
    private static let candidates = """
        SELECT DISTINCT ON (device_id, token_kind, CASE WHEN token_kind = 'runtime' THEN coalesce(stream_id, '') ELSE '' END) *
        FROM countdown_token_invalidations
        WHERE invalidated_at >= \(TimeCutoff.sql) AND ($3::text IS NULL OR reason = $3) AND restored_at IS NULL
        ORDER BY device_id, token_kind, CASE WHEN token_kind = 'runtime' THEN coalesce(stream_id, '') ELSE '' END, invalidated_at DESC, id DESC
        """

    /// The candidates `c` a restore would put back (`restorable`).
    private static let restorableIDs = """
        SELECT c.id FROM c JOIN devices d ON d.device_id = c.device_id AND d.user_id = c.user_id
        WHERE (c.token_kind = 'fcm' AND d.fcm_token IS NULL)
           OR (c.token_kind = 'push_to_start' AND d.push_to_start_token IS NULL)
           OR (c.token_kind = 'runtime' AND EXISTS (SELECT 1 FROM streams s WHERE s.id = c.stream_id)
               AND NOT EXISTS (SELECT 1 FROM live_activity_sessions x WHERE x.stream_id = c.stream_id AND x.device_id = c.device_id))
        ORDER BY c.id
        """

    /// Per kind: the statement that puts the candidates `c` back and returns the ids of the entries it restored.
    private static let restoreStatements: [(TargetToken, String)] = [
        (.fcm, """
            UPDATE devices d SET fcm_token = c.old_value FROM c
            WHERE c.token_kind = 'fcm' AND d.device_id = c.device_id AND d.user_id = c.user_id AND d.fcm_token IS NULL
            RETURNING c.id, c.device_id, c.stream_id
            """),
        (.pushToStart, """
            UPDATE devices d SET push_to_start_token = c.old_value FROM c
            WHERE c.token_kind = 'push_to_start' AND d.device_id = c.device_id AND d.user_id = c.user_id AND d.push_to_start_token IS NULL
            RETURNING c.id, c.device_id, c.stream_id
            """),
        (.runtime, """
            , inserted AS (
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token, activity_id)
                SELECT c.stream_id, c.device_id, u.id, c.old_value, c.activity_id FROM c
                JOIN streams s ON s.id = c.stream_id
                JOIN devices d ON d.device_id = c.device_id AND d.user_id = c.user_id
                LEFT JOIN users u ON u.id = c.user_id
                WHERE c.token_kind = 'runtime'
                ON CONFLICT (stream_id, device_id) DO NOTHING
                RETURNING stream_id, device_id)
            SELECT c.id FROM c JOIN inserted i ON i.stream_id = c.stream_id AND i.device_id = c.device_id WHERE c.token_kind = 'runtime'
            """),
    ]
}
