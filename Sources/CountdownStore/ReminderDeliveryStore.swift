import Foundation
import Postgres

/// `countdown_reminder_deliveries`: which devices a stream's reminder went to, and which are being sent to by
/// whom (SPEC 10.1, crash duplicates at most the pushes in flight).
public enum ReminderDeliveryStore {
    /// What `claim` found for a chunk's devices.
    public struct Claim: Sendable, Equatable {
        /// Claimed by this sender now: send to these.
        public var claimed: Set<String>
        /// Their reminder was sent already (by an earlier run): send nothing. The others of the chunk are being
        /// sent to by another live sender.
        public var sent: Set<String>
    }

    /// The workers holding live claims on the stream's reminder deliveries, other than `except`.
    public static func claimOwners(_ stream: String, except: String?, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT DISTINCT claimed_by FROM countdown_reminder_deliveries
            WHERE stream_id = $1 AND status = 'sending' AND claimed_until >= now() AND claimed_by IS NOT NULL AND claimed_by IS DISTINCT FROM $2
            """, [stream, except]).map { try $0.decode("claimed_by", as: String.self) }
    }

    /// Claims `devices` (device, user) of the stream's reminder for `seconds` for `owner`: new devices, and claims
    /// that expired or belong to a worker in `deadOwners`. Devices already `sent` are reported as such.
    public static func claim(_ stream: String, devices: [(device: String, user: String)], seconds: Int, owner: String?, deadOwners: [String],
                             on connection: PostgresConnection) throws -> Claim {
        guard !devices.isEmpty else { return Claim(claimed: [], sent: []) }
        let sorted = devices.sorted { $0.device < $1.device }
        var claim = Claim(claimed: [], sent: [])
        for row in try connection.query("""
            WITH input AS (SELECT * FROM unnest($2::text[], $3::text[]) AS t(device_id, user_id)),
            taken AS (
                INSERT INTO countdown_reminder_deliveries AS r (stream_id, device_id, user_id, status, claimed_by, claimed_until)
                SELECT $1, device_id, user_id, 'sending', $5, now() + make_interval(secs => $4) FROM input ORDER BY device_id
                ON CONFLICT (stream_id, device_id) DO UPDATE SET user_id = EXCLUDED.user_id, claimed_by = EXCLUDED.claimed_by,
                    claimed_until = EXCLUDED.claimed_until
                WHERE r.status = 'sending' AND (r.claimed_until < now() OR r.claimed_by = ANY($6::text[]))
                RETURNING device_id)
            SELECT device_id, true AS taken FROM taken
            UNION ALL
            SELECT r.device_id, false FROM countdown_reminder_deliveries r JOIN input i ON i.device_id = r.device_id
            WHERE r.stream_id = $1 AND r.status = 'sent'
            """, [stream, PostgresTextArray(sorted.map(\.device)), PostgresTextArray(sorted.map(\.user)), seconds, owner,
                  PostgresTextArray(deadOwners)]) {
            let device: String = try row.decode("device_id")
            if try row.decode("taken", as: Bool.self) { claim.claimed.insert(device) } else { claim.sent.insert(device) }
        }
        return claim
    }

    /// Records the reminder as sent to `sent` and lets go of the claims of `released` (to be sent again later), for
    /// claims held by `owner`.
    public static func settle(_ stream: String, sent: [String], released: [String], owner: String?, on connection: PostgresConnection) throws {
        if !sent.isEmpty {
            try connection.execute("""
                UPDATE countdown_reminder_deliveries SET status = 'sent', sent_at = now(), claimed_by = NULL, claimed_until = NULL
                WHERE stream_id = $1 AND device_id = ANY($2::text[]) AND status = 'sending' AND claimed_by IS NOT DISTINCT FROM $3
                """, [stream, PostgresTextArray(sent.sorted()), owner])
        }
        if !released.isEmpty {
            try connection.execute("""
                DELETE FROM countdown_reminder_deliveries
                WHERE stream_id = $1 AND device_id = ANY($2::text[]) AND status = 'sending' AND claimed_by IS NOT DISTINCT FROM $3
                """, [stream, PostgresTextArray(released.sorted()), owner])
        }
    }
}
