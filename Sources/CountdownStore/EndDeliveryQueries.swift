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
        /// How many `Retry-After` holds (`hold`) the dismissal window cut short.
        public var holdsCapped = 0
        /// Seconds since the first failure of each device still retried (its oldest activity's): `hold` holds only
        /// these, and no longer than their dismissal window.
        var failingByDevice: [String: Double] = [:]
    }

    /// An end push the service refused with a `Retry-After` of `seconds`: the device's session end claim (or, with
    /// `user`, its Android countdown's ledger row) is held until then.
    public struct Hold: Sendable {
        public var device: String
        /// The user of an Android countdown's ledger row (nil for an iOS session).
        public var user: String?
        public var seconds: Double

        public init(device: String, user: String? = nil, seconds: Double) {
            self.device = device
            self.user = user
            self.seconds = seconds
        }
    }

    /// How long end pushes are retried: the dismissal window (`END_DISMISS_AFTER_SECONDS`), at least 15 minutes.
    public static func window(_ settings: FlowSettings) -> Int { max(settings.endDismissAfterSeconds, 900) }

    /// The delay before the next try of the ends still retried (`EndRetrySchedule`: every few seconds during their
    /// first minute, then a backoff doubling from 30 s to 10 minutes).
    public static func backoff(_ outcome: Outcome) -> Duration {
        EndRetrySchedule.delay(failingForSeconds: outcome.failingForSeconds)
    }

    /// Notes one retried row of `device` of `attempts` attempts whose first failure was `failingFor` seconds ago.
    static func retrying(_ outcome: inout Outcome, device: String, attempts: Int, failingFor: Double) {
        outcome.failingByDevice[device] = max(outcome.failingByDevice[device] ?? 0, failingFor)
        outcome.failingForSeconds = outcome.retrying == 0 ? failingFor : min(outcome.failingForSeconds, failingFor)
        outcome.retrying += 1
        outcome.attempts = max(outcome.attempts, attempts)
    }

    /// Forgets the attempts of sessions that are done (delivered, or their token is dead): of `devices`, each the
    /// activity of `activities` (one per device, in order), or without them the activity '' (an Android countdown's).
    public static func settled(_ devices: [String], activities: [String]? = nil, stream: String, on connection: PostgresConnection) throws {
        guard !devices.isEmpty else { return }
        try connection.execute("""
            DELETE FROM countdown_end_attempts a USING unnest($2::text[], $3::text[]) AS t(device_id, activity_id)
            WHERE a.stream_id = $1 AND a.device_id = t.device_id AND a.activity_id = t.activity_id
            """, [stream, PostgresTextArray(devices), PostgresTextArray(activities ?? devices.map { _ in "" })])
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
                Self.retrying(&outcome, device: key[0], attempts: try row.decode("attempts"), failingFor: try row.decode("failing_for"))
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
            """ : SessionQueries.deleting(
                using: "unnest($2::text[], $3::text[]) AS t(device_id, token)",
                where: "s.stream_id = $1 AND s.device_id = t.device_id AND s.live_activity_token = t.token",
                returning: "s.device_id, coalesce(s.activity_id, '') AS activity_id, s.live_activity_token")
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

    /// Keeps the end claims of `held` (refused with a `Retry-After`) until it has passed, held by no worker: every end
    /// job of the stream (the stream's end, a late session's end) leaves them alone until then, so the `Retry-After`
    /// is honoured whichever job comes first (SPEC 10.1). No dead-worker takeover applies to an owner-less hold; it
    /// simply expires. Only the devices whose ends `record` (called first, in the same transaction) still retries are
    /// held: one given up on (its session re-registered with a new token meanwhile, say) has nothing left to hold
    /// for, and its new session's end goes at once. A hold never outlasts the device's dismissal window
    /// (`windowSeconds` from its first failed end push): a `Retry-After` of up to a day would park the end past the
    /// time it matters; the next try then goes as the window closes, and a failure then gives the end up. Counts in
    /// `outcome` the holds capped; answers the devices held. `android`: the holds are of Android countdowns (the start
    /// ledger's claims).
    @discardableResult
    public static func hold(_ held: [Hold], stream: String, windowSeconds: Int, android: Bool = false, into outcome: inout Outcome,
                            on connection: PostgresConnection) throws -> Set<String> {
        let failing = outcome.failingByDevice
        let held = held.filter { failing[$0.device] != nil }
        guard !held.isEmpty else { return [] }
        let update = android ? """
            UPDATE countdown_start_ledger l SET android_claimed_until = h.until, android_claimed_by = NULL FROM h
            WHERE l.stream_id = $1 AND l.user_id = h.user_id AND l.device_id = h.device_id AND l.android_ended_at IS NULL
            """ : """
            UPDATE countdown_session_end_claims c SET claimed_until = h.until, claimed_by = NULL FROM h
            WHERE c.stream_id = $1 AND c.device_id = h.device_id
            """
        let capped = try connection.query("""
            WITH t AS (SELECT device_id, user_id, max(seconds::float8) AS seconds, max(window_left::float8) AS window_left
                       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(device_id, user_id, seconds, window_left)
                       GROUP BY device_id, user_id),
            h AS (SELECT device_id, user_id, now() + make_interval(secs => least(seconds, window_left)) AS until,
                         window_left < seconds AS capped FROM t),
            u AS (\(update)
                  RETURNING h.capped)
            SELECT count(*) FILTER (WHERE capped) AS capped FROM u
            """, [stream, PostgresTextArray(held.map(\.device)), PostgresTextArray(held.map(\.user)),
                  PostgresTextArray(held.map { String($0.seconds) }),
                  PostgresTextArray(held.map { String(Double(windowSeconds) - (failing[$0.device] ?? 0)) })])
        outcome.holdsCapped += try capped[0].decode("capped", as: Int.self)
        return Set(held.map(\.device))
    }
}
