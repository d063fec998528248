import CountdownDomain
import Foundation
import Postgres

/// Keeps end pushes from being dropped silently: a session whose end push failed for a reason other than a dead
/// runtime token stays, and its failures are counted in `countdown_end_attempts` (per device and activity); once
/// its first failure is older than the dismissal window, the session is recorded in `countdown_undeliverable_ends`
/// with the last reason and deleted.
public enum EndDeliveryQueries {
    /// One session's failed end push this time. `reason` is a short label (`no_fcm_token`, `rejected`, `retry`,
    /// `config`, `fcm_token_refused`, `payload_error`).
    public struct Failure: Sendable {
        public var device: String
        /// The session's activity id ('' for one registered without, and for an Android countdown).
        public var activity: String
        public var token: String
        public var reason: String

        public init(device: String, activity: String = "", token: String, reason: String) {
            self.device = device
            self.activity = activity
            self.token = token
            self.reason = reason
        }
    }

    public struct Outcome: Sendable {
        /// Sessions still being retried.
        public var retrying = 0
        /// The most attempts any of them has had.
        public var attempts = 0
        /// Seconds since the most recent first failure among them (the one the retry schedule follows).
        public var failingForSeconds = 0.0
        /// Reasons of the sessions given up on now (one entry each).
        public var undeliverable: [String] = []
    }

    /// How long end pushes are retried: the dismissal window (`END_DISMISS_AFTER_SECONDS`), at least 15 minutes.
    public static func window(_ settings: FlowSettings) -> Int { max(settings.endDismissAfterSeconds, 900) }

    /// The delay before the next try of the ends still retried (`EndRetrySchedule`: every few seconds during their
    /// first minute, then a backoff doubling from 30 s to 10 minutes).
    public static func backoff(_ outcome: Outcome) -> Duration {
        EndRetrySchedule.delay(failingForSeconds: outcome.failingForSeconds)
    }

    /// Notes one retried row of `attempts` attempts whose first failure was `failingFor` seconds ago.
    static func retrying(_ outcome: inout Outcome, attempts: Int, failingFor: Double) {
        outcome.failingForSeconds = outcome.retrying == 0 ? failingFor : min(outcome.failingForSeconds, failingFor)
        outcome.retrying += 1
        outcome.attempts = max(outcome.attempts, attempts)
    }

    /// Forgets the attempts of sessions that are done (delivered, or their token is dead): every activity of
    /// `devices`, or with `activities` (one per device, in order) only those.
    public static func settled(_ devices: [String], activities: [String]? = nil, stream: String, on connection: PostgresConnection) throws {
        guard !devices.isEmpty else { return }
        guard let activities else {
            try connection.execute("DELETE FROM countdown_end_attempts WHERE stream_id = $1 AND device_id = ANY($2::text[])",
                                   [stream, PostgresTextArray(devices)])
            return
        }
        try connection.execute("""
            DELETE FROM countdown_end_attempts a USING unnest($2::text[], $3::text[]) AS t(device_id, activity_id)
            WHERE a.stream_id = $1 AND a.device_id = t.device_id AND a.activity_id = t.activity_id
            """, [stream, PostgresTextArray(devices), PostgresTextArray(activities)])
    }

    /// Counts the failures; those whose first failure is older than `windowSeconds` are given up on: the session
    /// deleted (`android`: the device's Android countdown marked ended, `undeliverable`) and recorded undeliverable.
    public static func record(_ failures: [Failure], stream: String, windowSeconds: Int, android: Bool = false,
                              on connection: PostgresConnection) throws -> Outcome {
        guard !failures.isEmpty else { return Outcome() }
        var outcome = Outcome()
        var expired: [Failure] = []
        let byActivity = Dictionary(failures.map { ([$0.device, $0.activity], $0) }) { first, _ in first }
        let unique = Array(byActivity.values).sorted { ($0.device, $0.activity) < ($1.device, $1.activity) }
        for row in try connection.query("""
            INSERT INTO countdown_end_attempts (stream_id, device_id, activity_id, last_reason)
            SELECT $1, * FROM unnest($2::text[], $5::text[], $3::text[])
            ON CONFLICT (stream_id, device_id, activity_id) DO UPDATE
                SET attempts = countdown_end_attempts.attempts + 1, last_reason = EXCLUDED.last_reason
            RETURNING device_id, activity_id, attempts, first_failed_at <= now() - make_interval(secs => $4) AS expired,
                extract(epoch FROM now() - first_failed_at)::float8 AS failing_for
            """, [stream, PostgresTextArray(unique.map(\.device)), PostgresTextArray(unique.map(\.reason)), windowSeconds,
                  PostgresTextArray(unique.map(\.activity))]) {
            let key: [String] = [try row.decode("device_id"), try row.decode("activity_id")]
            if try row.decode("expired", as: Bool.self), let failure = byActivity[key] {
                expired.append(failure)
            } else {
                Self.retrying(&outcome, attempts: try row.decode("attempts"), failingFor: try row.decode("failing_for"))
            }
        }
        guard !expired.isEmpty else { return outcome }
        let gone = android ? """
            gone AS (
                UPDATE countdown_start_ledger s SET android_ended_at = now(), android_end_reason = 'undeliverable',
                    android_claimed_until = NULL, android_claimed_by = NULL
                FROM unnest($2::text[], $3::text[]) AS t(device_id, token)
                WHERE s.stream_id = $1 AND s.device_id = t.device_id AND s.android_ended_at IS NULL
                RETURNING s.device_id, '' AS activity_id, '' AS live_activity_token)
            """ : """
            newest AS (
                DELETE FROM live_activity_sessions s USING unnest($2::text[], $3::text[]) AS t(device_id, token)
                WHERE s.stream_id = $1 AND s.device_id = t.device_id AND s.live_activity_token = t.token
                RETURNING s.device_id, coalesce(s.activity_id, '') AS activity_id, s.live_activity_token),
            older AS (
                DELETE FROM countdown_activity_sessions s USING unnest($2::text[], $3::text[]) AS t(device_id, token)
                WHERE s.stream_id = $1 AND s.device_id = t.device_id AND s.live_activity_token = t.token
                RETURNING s.device_id, s.activity_id, s.live_activity_token),
            gone AS (SELECT * FROM newest UNION ALL SELECT * FROM older)
            """
        outcome.undeliverable = try connection.query("""
            WITH \(gone),
            attempts AS (
                DELETE FROM countdown_end_attempts a USING unnest($2::text[], $4::text[]) AS t(device_id, activity_id)
                WHERE a.stream_id = $1 AND a.device_id = t.device_id AND a.activity_id = t.activity_id
                RETURNING a.device_id, a.activity_id, a.attempts, a.first_failed_at, a.last_reason)
            INSERT INTO countdown_undeliverable_ends (stream_id, device_id, live_activity_token, reason, attempts, first_failed_at)
            SELECT $1, gone.device_id, gone.live_activity_token, attempts.last_reason, attempts.attempts, attempts.first_failed_at
            FROM gone JOIN attempts USING (device_id, activity_id)
            RETURNING reason
            """, [stream, PostgresTextArray(expired.map(\.device)), PostgresTextArray(expired.map(\.token)),
                  PostgresTextArray(expired.map(\.activity))])
            .map { try $0.decode("reason", as: String.self) }
        return outcome
    }
}
