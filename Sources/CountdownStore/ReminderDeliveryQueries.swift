import Foundation
import Postgres

/// A reminder fan-out's records (SPEC 10.1, a crash repeats at most the pushes in flight): the chunks of users being
/// sent to, by whom (`countdown_reminder_claims`, one row per chunk), and the devices each answered batch reached
/// (`countdown_reminder_sends`, one row per batch).
public enum ReminderDeliveryQueries {
    /// What `claim` found for a chunk's devices.
    public struct Claim: Sendable, Equatable {
        /// The chunk's claim (nil: another live sender holds part of its range; send nothing now).
        public var id: Int64?
        /// Claimed by this sender now: send to these.
        public var claimed: Set<String>
        /// Their reminder was sent already (by an earlier run): send nothing.
        public var sent: Set<String>

        public init(id: Int64?, claimed: Set<String>, sent: Set<String>) {
            self.id = id
            self.claimed = claimed
            self.sent = sent
        }
    }

    /// The workers holding live claims on the stream's reminder chunks, other than `except`.
    public static func claimOwners(_ stream: String, except: String?, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT DISTINCT claimed_by FROM countdown_reminder_claims
            WHERE stream_id = $1 AND claimed_until >= now() AND claimed_by IS NOT NULL AND claimed_by IS DISTINCT FROM $2
            """, [stream, except]).map { try $0.decode("claimed_by", as: String.self) }
    }

    /// Claims the range of users of `devices` (device, user) for `seconds` for `owner`, sending for the planned start
    /// `planned`, unless a live claim of a worker not in `deadOwners` overlaps it. Claims it overlaps that expired or
    /// belong to a dead worker are taken over. The devices reached under an overlapping claim for a planned start at
    /// most `leadSeconds` before `planned` (or after it) are reported `sent`: deliveries count per planned start, and
    /// a move later by more than the lead sends the reminder again (SPEC 12.2). Run it in a transaction (claims of a
    /// stream are taken one at a time).
    public static func claim(_ stream: String, planned: Date, leadSeconds: Int = 0, devices: [(device: String, user: String)], seconds: Int,
                             owner: String?, deadOwners: [String], on connection: PostgresConnection) throws -> Claim {
        guard !devices.isEmpty else { return Claim(id: nil, claimed: [], sent: []) }
        let users = PostgresTextArray(Array(Set(devices.map(\.user))).sorted())
        _ = try connection.query("SELECT pg_advisory_xact_lock(hashtextextended('countdown.reminders:' || $1, 0))", [stream])
        // The range is taken in SQL, so by the column's collation.
        var overlapping: [Int64] = []
        var counted: [Int64] = []
        var held = false
        for row in try connection.query("""
            SELECT c.id, c.claimed_by, c.claimed_until >= now() AS live, c.planned_start >= $3::timestamptz - make_interval(secs => $4) AS counts
            FROM countdown_reminder_claims c, (SELECT min(u) AS first_user, max(u) AS last_user FROM unnest($2::text[]) AS u) AS b
            WHERE c.stream_id = $1 AND c.first_user <= b.last_user AND c.last_user >= b.first_user
            """, [stream, users, planned, leadSeconds]) {
            let id: Int64 = try row.decode("id")
            overlapping.append(id)
            if try row.decode("counts", as: Bool.self) { counted.append(id) }
            let by: String? = try row.decode("claimed_by")
            if try row.decode("live", as: Bool.self), !(by.map(deadOwners.contains) ?? false) { held = true }
        }
        if held { return Claim(id: nil, claimed: [], sent: []) }
        let sent = counted.isEmpty ? [] : Set(try connection.query("""
            SELECT DISTINCT d.device_id FROM countdown_reminder_sends s CROSS JOIN LATERAL unnest(s.devices) AS d(device_id)
            WHERE s.claim_id = ANY($1::bigint[]) AND d.device_id = ANY($2::text[])
            """, [PostgresTextArray(counted.map(String.init)), PostgresTextArray(devices.map(\.device))]).map { try $0.decode("device_id", as: String.self) })
        if !overlapping.isEmpty {
            try connection.execute("""
                UPDATE countdown_reminder_claims SET claimed_until = now() WHERE id = ANY($1::bigint[]) AND claimed_until > now()
                """, [PostgresTextArray(overlapping.map(String.init))])
        }
        guard let id = try connection.query("""
            INSERT INTO countdown_reminder_claims (stream_id, planned_start, first_user, last_user, claimed_by, claimed_until)
            SELECT $1, $2, min(u), max(u), $4, now() + make_interval(secs => $5) FROM unnest($3::text[]) AS u
            RETURNING id
            """, [stream, planned, users, owner, seconds]).first?.decode("id", as: Int64.self) else {
            throw PostgresError(code: .decodeFailed, what: "claim reminders of \(stream): no claim returned")
        }
        return Claim(id: id, claimed: Set(devices.map(\.device)).subtracting(sent), sent: sent)
    }

    /// Records that the devices `sent` of the claim `claim` took the reminder: one row for the batch.
    public static func record(_ stream: String, claim: Int64, sent: [String], on connection: PostgresConnection) throws {
        guard !sent.isEmpty else { return }
        try connection.execute("INSERT INTO countdown_reminder_sends (claim_id, stream_id, devices) VALUES ($1, $2, $3::text[])",
                               [claim, stream, PostgresTextArray(sent)])
    }

    /// Lets go of the claim `claim` (its chunk's users are written): a later run sends to its devices not recorded.
    public static func release(_ claim: Int64, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE countdown_reminder_claims SET claimed_until = now() WHERE id = $1 AND claimed_until > now()", [claim])
    }
}
