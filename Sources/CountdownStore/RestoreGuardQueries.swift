import CountdownDomain
import Foundation
import Postgres

/// The restore guard's SQL (SPEC 12.4): PostgreSQL's newest ledger time (`countdown_ledger_clock`), the streams
/// whose start window overlaps a span, their devices as the start fan-out sees them, and the write that records
/// reminders as sent without sending them. The ledger rows themselves are written by `StartLedger.assumeSent`.
public enum RestoreGuardQueries {
    /// PostgreSQL's newest ledger time and its now.
    public static func ledgerClock(on connection: PostgresConnection) throws -> (newest: Date, now: Date) {
        guard let row = try connection.query("SELECT newest, now() AS now FROM countdown_ledger_clock").first else {
            let now = try connection.query("SELECT now() AS now")[0].decode("now", as: Date.self)
            return (now, now)
        }
        return (try row.decode("newest"), try row.decode("now"))
    }

    /// Moves the ledger's clock to now (the guard ran: what the ledger holds is the truth again).
    public static func resetLedgerClock(on connection: PostgresConnection) throws {
        try connection.execute("UPDATE countdown_ledger_clock SET newest = now()")
    }

    /// The database's now, and whether `since` lies after it.
    public static func isFuture(_ since: TimeCutoff, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT \(TimeCutoff.sql) > now() AS future", since.parameters)[0].decode("future")
    }

    /// Scheduled streams whose start window `[planned − lead, planned)` overlaps `[since, now]`, in id order.
    public static func streamsInWindow(since: TimeCutoff, leadSeconds: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT id FROM streams
            WHERE status = 'scheduled' AND planned_start_at > \(TimeCutoff.sql)
              AND planned_start_at - make_interval(secs => $3) <= now()
            ORDER BY id
            """, since.parameters + [leadSeconds]).map { try $0.decode("id") }
    }

    /// Every device of every participant of `streams`, as the start fan-out sees them (`StartLedger.candidates`).
    public static func devices(of streams: [String], on connection: PostgresConnection) throws -> [(stream: String, device: DeviceCandidate)] {
        try StartLedger.candidates(streams, scope: .stream, on: connection).map { (stream: $0.0, device: $0.1) }
    }

    /// Marks `sent` every active reminder of a scheduled stream whose reminder time `planned − lead` is at most now
    /// and whose start lies after `since`; returns how many.
    public static func markRemindersSent(since: TimeCutoff, leadSeconds: Int, on connection: PostgresConnection) throws -> Int {
        try connection.execute("""
            UPDATE stream_reminders r SET status = 'sent'
            FROM streams s
            WHERE s.id = r.stream_id AND r.status = 'active' AND s.status = 'scheduled'
              AND s.planned_start_at > \(TimeCutoff.sql) AND s.planned_start_at - make_interval(secs => $3) <= now()
            """, since.parameters + [leadSeconds])
    }
}
