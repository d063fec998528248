import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// A failed end push keeps its session and is counted; once its first failure is older than the window the session
/// is recorded as undeliverable and deleted; the retry schedule follows the youngest first failure (`EndRetrySchedule`).
@Suite struct EndDeliveryQueriesTests {
    static let rows = """
        INSERT INTO users (id, display_name) VALUES ('u', 'U');
        INSERT INTO devices (device_id, user_id, platform) VALUES ('d1', 'u', 'ios'), ('d2', 'u', 'ios');
        INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now(), 'started');
        INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES
            ('s', 'd1', 'u', 'run-1'), ('s', 'd2', 'u', 'run-2');
        """

    static func record(_ failures: [(String, String, String)], window: Int = 900, on client: PostgresClient) async throws
        -> EndDeliveryQueries.Outcome {
        let failures = failures.map { EndDeliveryQueries.Failure(device: $0.0, token: $0.1, reason: $0.2) }
        return try await client.transaction { try EndDeliveryQueries.record(failures, stream: "s", windowSeconds: window, on: $0) }
    }

    static func summary(_ outcome: EndDeliveryQueries.Outcome) -> String {
        "retrying \(outcome.retrying), attempts \(outcome.attempts), given up \(outcome.undeliverable)"
    }

    static func attempts(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("SELECT concat_ws(' ', device_id, attempts, last_reason) FROM countdown_end_attempts ORDER BY device_id")
    }

    static func sessions(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("SELECT device_id FROM live_activity_sessions ORDER BY 1")
    }

    @Test func failuresAreCountedPerSessionAndTheSessionsStay() async throws {
        try await StoreDatabase.with(prefix: "store_end_counted") { client in
            try await client.seed(Self.rows)
            let first = try await Self.record([("d1", "run-1", "retry"), ("d2", "run-2", "rejected")], on: client)
            #expect(Self.summary(first) == "retrying 2, attempts 1, given up []")
            let second = try await Self.record([("d1", "run-1", "config")], on: client)
            #expect(Self.summary(second) == "retrying 1, attempts 2, given up []")
            #expect(try await Self.attempts(client) == ["d1 2 config", "d2 1 rejected"])
            #expect(try await Self.sessions(client) == ["d1", "d2"])
            #expect(Self.summary(try await Self.record([], on: client)) == "retrying 0, attempts 0, given up []")
        }
    }

    @Test func settledSessionsForgetTheirAttempts() async throws {
        try await StoreDatabase.with(prefix: "store_end_settled") { client in
            try await client.seed(Self.rows)
            _ = try await Self.record([("d1", "run-1", "retry"), ("d2", "run-2", "retry")], on: client)
            try await client.withConnection { try EndDeliveryQueries.settled(["d1"], stream: "other", on: $0) }
            #expect(try await Self.attempts(client).count == 2, "another stream's settlement leaves these")
            try await client.withConnection { try EndDeliveryQueries.settled(["d1"], stream: "s", on: $0) }
            #expect(try await Self.attempts(client) == ["d2 1 retry"])
            // Counting starts again after a settlement.
            _ = try await Self.record([("d1", "run-1", "retry")], on: client)
            #expect(try await Self.attempts(client) == ["d1 1 retry", "d2 1 retry"])
        }
    }

    @Test func aSessionFailingPastTheWindowIsGivenUpAndRecorded() async throws {
        try await StoreDatabase.with(prefix: "store_end_given_up") { client in
            try await client.seed(Self.rows)
            _ = try await Self.record([("d1", "run-1", "retry"), ("d2", "run-2", "retry")], on: client)
            try await client.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '901 seconds' WHERE device_id = 'd1'")
            let outcome = try await Self.record([("d1", "run-1", "rejected"), ("d2", "run-2", "retry")], on: client)
            #expect(Self.summary(outcome) == "retrying 1, attempts 2, given up [\"rejected\"]")
            #expect(try await Self.sessions(client) == ["d2"])
            #expect(try await Self.attempts(client) == ["d2 2 retry"])
            #expect(try await client.lines("""
                SELECT concat_ws(' ', stream_id, device_id, live_activity_token, reason, attempts,
                                 (first_failed_at <= now() - interval '901 seconds')::text)
                FROM countdown_undeliverable_ends
                """) == ["s d1 run-1 rejected 2 true"])
        }
    }

    @Test func aSessionWithANewTokenIsNotGivenUpForTheOldOne() async throws {
        try await StoreDatabase.with(prefix: "store_end_new_token") { client in
            try await client.seed(Self.rows)
            _ = try await Self.record([("d1", "run-1", "retry")], on: client)
            try await client.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '1 hour'")
            try await client.execute("UPDATE live_activity_sessions SET live_activity_token = 'run-1-new' WHERE device_id = 'd1'")
            let outcome = try await Self.record([("d1", "run-1", "retry")], on: client)
            #expect(Self.summary(outcome) == "retrying 0, attempts 0, given up []")
            #expect(try await Self.sessions(client) == ["d1", "d2"])
            #expect(try await client.lines("SELECT device_id FROM countdown_undeliverable_ends").isEmpty)
        }
    }

    /// A `Retry-After` on an end given up on in the same settlement (its session re-registered with a new token
    /// meanwhile) holds nothing: the new session's end claim is released for the next try, not held for a window.
    @Test func aRetryAfterOnAnEndGivenUpHoldsNothing() async throws {
        try await StoreDatabase.with(prefix: "store_end_hold_given_up") { client in
            try await client.seed(Self.rows)
            _ = try await Self.record([("d1", "run-1", "retry"), ("d2", "run-2", "retry")], on: client)
            try await client.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '1 hour' WHERE device_id = 'd1'")
            try await client.execute("UPDATE live_activity_sessions SET live_activity_token = 'run-1-new' WHERE device_id = 'd1'")
            try await client.execute("""
                INSERT INTO countdown_session_end_claims (stream_id, device_id, claimed_until, claimed_by)
                VALUES ('s', 'd1', now() + interval '1 minute', 'me'), ('s', 'd2', now() + interval '1 minute', 'me')
                """)
            let failures = [EndDeliveryQueries.Failure(device: "d1", token: "run-1", reason: "retry"),
                            EndDeliveryQueries.Failure(device: "d2", token: "run-2", reason: "retry")]
            let (_, ledger) = try await StoreClient(client).settleEnds("s", refused: [], finished: [], done: [], failed: failures, windowSeconds: 900,
                                                                      claimed: ["d1", "d2"], holding: [.init(device: "d1", seconds: 60),
                                                                                                       .init(device: "d2", seconds: 60)])
            #expect(Self.summary(ledger) == "retrying 1, attempts 2, given up []")
            #expect(try await Self.sessions(client) == ["d1", "d2"], "d1's new session stays")
            #expect(try await client.lines("""
                SELECT concat_ws(' ', device_id, (claimed_by IS NULL)::text, (claimed_until > now() + interval '50 seconds')::text) FROM countdown_session_end_claims
                """) == ["d2 true true"], "d1's claim released, d2's held for its Retry-After")
        }
    }

    /// Each held device's claim is kept for its `Retry-After`, no longer than what is left of its window; the holds
    /// the window cut short are counted.
    @Test func holdsAreCappedByTheWindowAndCounted() async throws {
        try await StoreDatabase.with(prefix: "store_end_hold_capped") { client in
            try await client.seed(Self.rows)
            try await client.execute("""
                INSERT INTO countdown_session_end_claims (stream_id, device_id, claimed_until, claimed_by)
                VALUES ('s', 'd1', now() + interval '1 minute', 'me'), ('s', 'd2', now() + interval '1 minute', 'me')
                """)
            let failures = [EndDeliveryQueries.Failure(device: "d1", token: "run-1", reason: "retry"),
                            EndDeliveryQueries.Failure(device: "d2", token: "run-2", reason: "retry")]
            let holds = [EndDeliveryQueries.Hold(device: "d1", seconds: 60), .init(device: "d2", seconds: 30),
                         .init(device: "d2", seconds: 86_400)]
            let (held, capped) = try await client.transaction { connection in
                var outcome = try EndDeliveryQueries.record(failures, stream: "s", windowSeconds: 900, on: connection)
                let held = try EndDeliveryQueries.hold(holds, stream: "s", windowSeconds: 900, into: &outcome, on: connection)
                return (held, outcome.holdsCapped)
            }
            #expect(held == ["d1", "d2"] && capped == 1)
            let left = try await client.query("SELECT extract(epoch FROM claimed_until - now())::float8 AS s FROM countdown_session_end_claims ORDER BY device_id")
                .map { try $0.decode("s", as: Double.self) }
            #expect(left.count == 2 && left[0] > 50 && left[0] <= 60 && left[1] > 880 && left[1] <= 900, "held \(left) s")
        }
    }

    @Test func theWindowIsTheDismissalWindowAtLeastFifteenMinutes() {
        #expect(EndDeliveryQueries.window(FlowSettings(endDismissAfterSeconds: 60)) == 900)
        #expect(EndDeliveryQueries.window(FlowSettings(endDismissAfterSeconds: 4 * 3600)) == 4 * 3600)
    }

    /// SPEC 12.2: the retry schedule follows the most recent first failure among the ends still retried.
    @Test func theBackoffFollowsTheYoungestFailure() async throws {
        try await StoreDatabase.with(prefix: "store_end_backoff") { client in
            try await client.seed(Self.rows)
            let first = try await Self.record([("d1", "run-1", "rejected")], on: client)
            #expect(first.failingForSeconds < 5 && EndDeliveryQueries.backoff(first) == EndRetrySchedule.firstMinuteInterval)
            try await client.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '200 seconds'")
            let old = try await Self.record([("d1", "run-1", "rejected")], on: client)
            #expect(old.failingForSeconds >= 200 && old.failingForSeconds < 205)
            #expect(EndDeliveryQueries.backoff(old) == EndRetrySchedule.delay(failingForSeconds: old.failingForSeconds))
            let both = try await Self.record([("d1", "run-1", "rejected"), ("d2", "run-2", "retry")], on: client)
            #expect(both.failingForSeconds < 5, "d2 failed just now: its first minute decides")
        }
    }
}
