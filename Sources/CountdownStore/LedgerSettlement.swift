import Postgres

/// The outcome of one start push, written back to the ledger in one statement per fan-out.
public struct LedgerSettlement: Sendable {
    public var stream: String
    public var user: String
    public var device: String
    public var status: String
    public var reason: String?
    public var name: String?
    /// The (FCM, push-to-start) tokens the push went to, when one was sent.
    public var tokens: (fcm: String, pts: String)?

    public init(stream: String, user: String, device: String, status: String, reason: String?, name: String? = nil,
         tokens: (fcm: String, pts: String)? = nil) {
        self.stream = stream
        self.user = user
        self.device = device
        self.status = status
        self.reason = reason
        self.name = name
        self.tokens = tokens
    }

    static func apply(_ unordered: [LedgerSettlement], on connection: PostgresConnection) throws {
        guard !unordered.isEmpty else { return }
        // In key order, as every writer of ledger rows locks them, so two fan-outs cannot deadlock.
        let settlements = unordered.sorted { ($0.stream, $0.user, $0.device) < ($1.stream, $1.user, $1.device) }
        try connection.execute("""
            UPDATE countdown_start_ledger l
            SET status = t.status, reason = t.reason, message_name = coalesce(t.name, l.message_name),
                claimed_until = NULL, updated_at = now(),
                sent_at = CASE WHEN t.status = 'sent' THEN now() ELSE l.sent_at END,
                token_hash = coalesce(md5(t.tokens), l.token_hash)
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                AS t(stream_id, user_id, device_id, status, reason, name, tokens)
            WHERE l.stream_id = t.stream_id AND l.user_id = t.user_id AND l.device_id = t.device_id
            """, [
                PostgresTextArray(settlements.map(\.stream)),
                PostgresTextArray(settlements.map(\.user)),
                PostgresTextArray(settlements.map(\.device)),
                PostgresTextArray(settlements.map(\.status)),
                PostgresTextArray(settlements.map(\.reason)),
                PostgresTextArray(settlements.map(\.name)),
                // Hashed in SQL exactly as the ledger upsert hashes candidates' tokens.
                PostgresTextArray(settlements.map { $0.tokens.map { $0.fcm + ":" + $0.pts } }),
            ])
    }
}
