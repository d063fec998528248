import Foundation
import Postgres

/// `streams` reads and writes of the flows that are not snapshots: expiry, streams in a start window, which
/// of a set are still scheduled.
public enum StreamQueries {
    /// What the expiry found: expired now, gone, no longer scheduled, or due later.
    public enum Expiry: Sendable, Equatable {
        case expired
        case missing
        case notScheduled(status: String)
        case later(expiresAt: Date, now: Date)
    }

    /// Expires the stream when it is still `scheduled` `expireAfter` seconds after its planned start (within
    /// `tolerance` seconds early).
    public static func expire(_ stream: String, expireAfter: Int, tolerance: Double, on connection: PostgresConnection) throws -> Expiry {
        let updated = try connection.execute("""
            UPDATE streams SET status = 'expired'
            WHERE id = $1 AND status = 'scheduled' AND planned_start_at + make_interval(secs => $2) <= now() + make_interval(secs => $3)
            """, [stream, expireAfter, tolerance])
        if updated == 1 { return .expired }
        let rows = try connection.query(
            "SELECT status, planned_start_at + make_interval(secs => $2) AS expires_at, now() AS now FROM streams WHERE id = $1",
            [stream, expireAfter])
        guard let row = rows.first else { return .missing }
        let status: String = try row.decode("status")
        guard status == "scheduled" else { return .notScheduled(status: status) }
        return .later(expiresAt: try row.decode("expires_at"), now: try row.decode("now"))
    }

    /// Key-share locks those of `ids` no other transaction holds `FOR UPDATE` (or is deleting), until this
    /// transaction ends, without waiting; returns the ones locked. A fan-out needs that lock anyway (its ledger and
    /// progress rows reference the stream), so the missing ones are exactly those another writer holds.
    public static func lockUnheld(_ ids: [String], on connection: PostgresConnection) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(try connection.query("SELECT id FROM streams WHERE id = ANY($1::text[]) ORDER BY id FOR KEY SHARE SKIP LOCKED",
                                         [PostgresTextArray(ids)]).map { try $0.decode("id", as: String.self) })
    }

    /// Whom a backfill is for: one device (through its user) or one user.
    public enum Member: Sendable {
        case device(String)
        case user(String)
    }

    /// Scheduled streams inside their start window (`lead` seconds before the planned start) in which the
    /// member is creator or guest, in id order.
    public static func streamsInStartWindow(of member: Member, lead: Int, on connection: PostgresConnection) throws -> [String] {
        let (filter, key) = switch member {
        case .device(let device): ("JOIN devices d ON d.user_id = p.user_id WHERE d.device_id = $1", device)
        case .user(let user): ("WHERE p.user_id = $1", user)
        }
        return try connection.query("""
            SELECT DISTINCT s.id FROM stream_participants p
            JOIN streams s ON s.id = p.stream_id
            \(filter)
              AND s.status = 'scheduled' AND s.planned_start_at > now()
              AND s.planned_start_at - make_interval(secs => $2) <= now()
            ORDER BY s.id
            """, [key, lead]).map { try $0.decode("id", as: String.self) }
    }

    /// Which of `ids` are streams still `scheduled`.
    public static func scheduled(_ ids: [String], on connection: PostgresConnection) throws -> Set<String> {
        Set(try connection.query("SELECT id FROM streams WHERE id = ANY($1::text[]) AND status = 'scheduled'",
                                 [PostgresTextArray(ids)]).map { try $0.decode("id", as: String.self) })
    }
}
