import Postgres

/// The outcome of one start push, written back to the ledger in one statement per fan-out.
struct LedgerSettlement: Sendable {
    var user: String
    var device: String
    var status: String
    var reason: String?
    var name: String?

    static func apply(_ settlements: [LedgerSettlement], stream: String, on connection: PostgresConnection) throws {
        guard !settlements.isEmpty else { return }
        try connection.execute("""
            UPDATE countdown_start_ledger l
            SET status = t.status, reason = t.reason, message_name = coalesce(t.name, l.message_name),
                claimed_until = NULL, updated_at = now(),
                sent_at = CASE WHEN t.status = 'sent' THEN now() ELSE l.sent_at END
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(user_id, device_id, status, reason, name)
            WHERE l.stream_id = $1 AND l.user_id = t.user_id AND l.device_id = t.device_id
            """, [
                stream,
                PostgresTextArray(settlements.map(\.user)),
                PostgresTextArray(settlements.map(\.device)),
                PostgresTextArray(settlements.map(\.status)),
                PostgresTextArray(settlements.map(\.reason)),
                PostgresTextArray(settlements.map(\.name)),
            ])
    }
}
