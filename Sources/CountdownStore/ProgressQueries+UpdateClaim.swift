import Foundation
import Postgres

extension ProgressQueries {
    /// The worker holding a live claim on the stream's update fan-out, other than `except`.
    public static func updateClaimOwners(_ stream: String, except: String?, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT update_claimed_by FROM countdown_stream_progress
            WHERE stream_id = $1 AND update_claimed_until >= now() AND update_claimed_by IS NOT NULL AND update_claimed_by IS DISTINCT FROM $2
            """, [stream, except]).map { try $0.decode("update_claimed_by", as: String.self) }
    }

    /// What `claimUpdate` found.
    public enum UpdateClaim: Sendable, Equatable { case claimed, heldElsewhere, streamMissing }

    /// Claims the stream's update fan-out for `seconds` under the id `claim` (unique per run), for `owner`: unless
    /// another run holds a live claim (one held by a worker in `deadOwners` is taken over).
    public static func claimUpdate(_ stream: String, claim: String, seconds: Int, owner: String?, deadOwners: [String],
                                   on connection: PostgresConnection) throws -> UpdateClaim {
        let won = try !connection.query("""
            INSERT INTO countdown_stream_progress (stream_id, update_claim, update_claimed_by, update_claimed_until)
            SELECT id, $2, $4, now() + make_interval(secs => $3) FROM streams WHERE id = $1
            ON CONFLICT (stream_id) DO UPDATE SET update_claim = EXCLUDED.update_claim, update_claimed_by = EXCLUDED.update_claimed_by,
                update_claimed_until = EXCLUDED.update_claimed_until
            WHERE countdown_stream_progress.update_claim IS NULL OR countdown_stream_progress.update_claimed_until < now()
                OR countdown_stream_progress.update_claimed_by = ANY($5::text[])
            RETURNING stream_id
            """, [stream, claim, seconds, owner, PostgresTextArray(deadOwners)]).isEmpty
        if won { return .claimed }
        return try connection.query("SELECT 1 FROM streams WHERE id = $1", [stream]).isEmpty ? .streamMissing : .heldElsewhere
    }

    /// Extends the update claim `claim` to `seconds` from now while its run is in flight; `false` when the claim is no
    /// longer this run's (taken over after it expired, or from a worker taken for dead).
    public static func extendUpdate(_ stream: String, claim: String, seconds: Int, on connection: PostgresConnection) throws -> Bool {
        try !connection.query("""
            UPDATE countdown_stream_progress SET update_claimed_until = now() + make_interval(secs => $3)
            WHERE stream_id = $1 AND update_claim = $2
            RETURNING stream_id
            """, [stream, claim, seconds]).isEmpty
    }

    /// Lets go of the update claim `claim` (a claim taken over meanwhile stays).
    public static func releaseUpdate(_ stream: String, claim: String, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE countdown_stream_progress SET update_claim = NULL, update_claimed_by = NULL, update_claimed_until = NULL
            WHERE stream_id = $1 AND update_claim = $2
            """, [stream, claim])
    }

    /// The stream's planned start now (nil when the stream is gone): an update fan-out checks after sending that
    /// the start it sent is still the current one.
    public static func plannedStart(_ stream: String, on connection: PostgresConnection) throws -> Date? {
        try connection.query("SELECT planned_start_at FROM streams WHERE id = $1", [stream]).first?.decode("planned_start_at", as: Date.self)
    }
}
