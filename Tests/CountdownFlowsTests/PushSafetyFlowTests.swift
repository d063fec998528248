import BlockingIO
import CountdownDomain
@testable import CountdownFlows
@testable import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// The flows against real PostgreSQL with a scripted gateway: a refusal clears only the token it names (and is
/// recorded), and an end push is never dropped silently.
@Suite struct PushSafetyFlowTests {
    /// Answers by the push's activity token (or FCM token, for notifications); accepts what it has no answer for.
    final class ScriptedGateway: OnePushGateway {
        let answers: [String: Delivery]
        let sent = Locked([String]())
        let payloads = Locked([String]())
        init(_ answers: [String: Delivery]) { self.answers = answers }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            let key: String
            switch push {
            case .liveActivity(let payload, _, let activity):
                key = activity
                payloads.withLock { $0.append(String(decoding: payload.apsJSON, as: UTF8.self)) }
            case .notification(_, let fcm): key = fcm
            case .androidCountdown(let message, let fcm):
                key = fcm
                payloads.withLock { $0.append("\(message.json)") }
            }
            sent.withLock { $0.append(key) }
            return answers[key] ?? .accepted(name: "ok")
        }
    }

    static func with(_ answers: [String: Delivery], _ body: (JobHandler, PostgresClient, CountingFlowMetrics) async throws -> Void) async throws {
        try await with(ScriptedGateway(answers), body)
    }

    static func with(_ gateway: ScriptedGateway, _ body: (JobHandler, PostgresClient, CountingFlowMetrics) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "safety") { client in
            let metrics = CountingFlowMetrics()
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(),
                                      settings: FlowSettings(startLeadSeconds: 3600), transport: .fcm, metrics: metrics,
                                      logger: Logger(level: .error, sink: CapturingLogSink()))
            try await body(JobHandler(context: context), client, metrics)
        }
    }

    static func count(_ db: PostgresClient, _ sql: String) async throws -> Int {
        try await db.query("SELECT count(*) AS n FROM (\(sql)) AS counted")[0].decode("n")
    }

    @Test func aStartRefusalClearsOnlyTheTokenItNames() async throws {
        let answers: [String: Delivery] = [
            "pts-a1": .tokenRefused(.pushToStart, reason: "INVALID_ARGUMENT"),
            "pts-a2": .tokenRefused(.fcm, reason: "UNREGISTERED"),
        ]
        try await Self.with(answers) { handler, db, _ in
            try await db.execute("INSERT INTO users (id, display_name) VALUES ('a', 'A')")
            try await db.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
                  ('a1', 'a', 'ios', 'fcm-a1', 'pts-a1'), ('a2', 'a', 'ios', 'fcm-a2', 'pts-a2')
                """)
            try await db.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes')")
            try await db.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'a', 'creator')")
            _ = try await handler.handle(.start(stream: "s"))
            let rows = try await db.query("SELECT device_id, fcm_token, push_to_start_token FROM devices ORDER BY device_id")
            #expect(try rows[0].decode("fcm_token", as: String?.self) == "fcm-a1", "a live_activity_token refusal keeps the FCM token")
            #expect(try rows[0].decode("push_to_start_token", as: String?.self) == nil)
            #expect(try rows[1].decode("fcm_token", as: String?.self) == nil)
            #expect(try rows[1].decode("push_to_start_token", as: String?.self) == "pts-a2", "an FCM refusal keeps the push-to-start token")
            let recorded = try await db.query("SELECT device_id, token_kind, old_value, reason, stream_id FROM countdown_token_invalidations ORDER BY device_id")
            #expect(try recorded.map { "\(try $0.decode("device_id", as: String.self)) \(try $0.decode("token_kind", as: String.self)) \(try $0.decode("old_value", as: String.self)) \(try $0.decode("reason", as: String.self)) \(try $0.decode("stream_id", as: String.self))" }
                    == ["a1 push_to_start pts-a1 INVALID_ARGUMENT s", "a2 fcm fcm-a2 UNREGISTERED s"])
        }
    }

    @Test func endPushesAreRetriedUntilTheWindowClosesThenRecordedUndeliverable() async throws {
        let answers: [String: Delivery] = [
            "run-b": .rejected(reason: "BadExpirationDate"),
            "run-c": .tokenRefused(.runtime, reason: "Unregistered"),
        ]
        try await Self.with(answers) { handler, db, metrics in
            try await db.execute("INSERT INTO users (id, display_name) VALUES ('u', 'U')")
            try await db.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
                  ('a', 'u', 'ios', 'fcm-a', NULL), ('b', 'u', 'ios', 'fcm-b', NULL), ('c', 'u', 'ios', 'fcm-c', NULL), ('d', 'u', 'ios', NULL, NULL)
                """)
            try await db.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now() - interval '1 minute', 'started')")
            try await db.execute("""
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES
                  ('s', 'a', 'u', 'run-a'), ('s', 'b', 'u', 'run-b'), ('s', 'c', 'u', 'run-c'), ('s', 'd', 'u', 'run-d')
                """)
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after == EndRetrySchedule.firstMinuteInterval, "every few seconds in the first minute (SPEC 12.2)")
            let left = try await db.query("SELECT device_id FROM live_activity_sessions ORDER BY device_id").map { try $0.decode("device_id", as: String.self) }
            #expect(left == ["b", "d"], "accepted (a) and dead runtime token (c) go; a refused push and a missing FCM token stay")
            #expect(try await Self.count(db, "SELECT 1 FROM countdown_token_invalidations WHERE token_kind = 'runtime' AND old_value = 'run-c'") == 1)
            let reasons = try await db.query("SELECT device_id, last_reason FROM countdown_end_attempts ORDER BY device_id")
                .map { "\(try $0.decode("device_id", as: String.self))=\(try $0.decode("last_reason", as: String.self))" }
            #expect(reasons == ["b=rejected", "d=no_fcm_token"])

            // A minute after the first failure, the backoff: 30 s, doubling.
            // The delay counts from the first failure: the time the handler takes on a loaded machine adds to it.
            let backdated = ContinuousClock.now
            try await db.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '90 seconds'")
            let second = try await handler.handle(.end(stream: "s"))
            let took = ContinuousClock.now - backdated
            guard case .retryOnSchedule(let later, _) = second else { Issue.record("expected a retry, got \(second)"); return }
            #expect(later >= .seconds(59) && later <= .seconds(61) + took, "backoff doubles: \(later) (the handler took \(took))")

            // The dismissal window closes.
            try await db.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '5 hours'")
            let last = try await handler.handle(.end(stream: "s"))
            guard case .done = last else { Issue.record("expected done, got \(last)"); return }
            #expect(try await Self.count(db, "SELECT 1 FROM live_activity_sessions") == 0)
            #expect(try await Self.count(db, "SELECT 1 FROM countdown_end_attempts") == 0)
            let undeliverable = try await db.query("SELECT device_id, reason, attempts FROM countdown_undeliverable_ends ORDER BY device_id")
                .map { "\(try $0.decode("device_id", as: String.self))=\(try $0.decode("reason", as: String.self))/\(try $0.decode("attempts", as: Int.self))" }
            #expect(undeliverable == ["b=rejected/3", "d=no_fcm_token/3"])
            #expect(metrics.undeliverable.value == ["rejected": 1, "no_fcm_token": 1])
        }
    }

    /// User `u` with iOS devices `a` and `b`, and the cancelled stream `s` (no sessions yet).
    static func seedCancelled(_ db: PostgresClient) async throws {
        try await db.execute("INSERT INTO users (id, display_name) VALUES ('u', 'U')")
        try await db.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
              ('a', 'u', 'ios', 'fcm-a', NULL), ('b', 'u', 'ios', 'fcm-b', NULL)
            """)
        try await db.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now() + interval '1 minute', 'cancelled')")
    }

    /// SPEC 10.1: a 429's `Retry-After` holds the session's end for every end job of the stream: the stream's end job
    /// that runs meanwhile (a late session's end job met the 429) sends to the other sessions only.
    @Test func aRetryAfterHoldsTheSessionsEndForEveryEndJob() async throws {
        let gateway = ScriptedGateway(["run-a": .retry(after: .seconds(6), reason: "QUOTA_EXCEEDED")])
        try await Self.with(gateway) { handler, db, _ in
            try await Self.seedCancelled(db)
            try await db.execute("""
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'a', 'u', 'run-a'), ('s', 'b', 'u', 'run-b')
                """)
            let first = try await handler.handle(.sessionEnd(stream: "s", device: "a"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after >= .seconds(6), "the job itself waits for the Retry-After")
            _ = try await handler.handle(.end(stream: "s"))
            #expect(gateway.sent.value == ["run-a", "run-b"], "the stream's end job leaves a's end to its Retry-After")
            let left = try await db.query("SELECT device_id FROM live_activity_sessions").map { try $0.decode("device_id", as: String.self) }
            #expect(left == ["a"])
            // Once the Retry-After has passed, a's end goes again.
            try await db.execute("UPDATE countdown_session_end_claims SET claimed_until = now() - interval '1 millisecond'")
            _ = try await handler.handle(.end(stream: "s"))
            #expect(gateway.sent.value == ["run-a", "run-b", "run-a"])
        }
    }

    /// Seconds until the (one) session end claim of `s` expires.
    static func heldFor(_ db: PostgresClient) async throws -> Double {
        try await db.query("SELECT extract(epoch FROM claimed_until - now())::float8 AS s FROM countdown_session_end_claims")[0].decode("s")
    }

    /// A `Retry-After` longer than the dismissal window (up to a day is accepted) holds the session's end only until
    /// the window closes, counted and logged: a broken or hostile push service cannot park an end past the time it
    /// matters. The job itself comes back by then too.
    @Test func aRetryAfterPastTheDismissalWindowHoldsTheEndOnlyUntilItCloses() async throws {
        let gateway = ScriptedGateway(["run-a": .retry(after: .seconds(86_400), reason: "QUOTA_EXCEEDED")])
        try await Self.with(gateway) { handler, db, metrics in
            try await Self.seedCancelled(db)
            try await db.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'a', 'u', 'run-a')")
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after <= .seconds(900), "the job comes back within the window (\(after))")
            let held = try await Self.heldFor(db)
            #expect(held > 880 && held <= 900, "held until the window closes, not for a day (\(held) s)")
            #expect(metrics.cappedHolds.value == ["ios": 1])

            // Refused again near the end of the window: held only for what is left of it.
            try await db.execute("UPDATE countdown_end_attempts SET first_failed_at = now() - interval '850 seconds'")
            try await db.execute("UPDATE countdown_session_end_claims SET claimed_until = now() - interval '1 millisecond'")
            _ = try await handler.handle(.end(stream: "s"))
            let left = try await Self.heldFor(db)
            #expect(left > 30 && left <= 50, "held for the window's last \(left) s")
            #expect(metrics.cappedHolds.value == ["ios": 2])
            #expect(gateway.sent.value == ["run-a", "run-a"])
        }
    }

    /// Every capped hold is counted and logged, also when the run leaves nothing to retry.
    @Test func aCappedHoldIsCountedWhenNothingIsLeftToRetry() async throws {
        try await MigratedDatabase.with(prefix: "safety_capped") { client in
            let metrics = CountingFlowMetrics()
            let log = CapturingLogSink()
            let context = FlowContext(database: client, push: ScriptedGateway([:]), payloads: try PushPayloadBuilder(), settings: FlowSettings(),
                                      transport: .fcm, metrics: metrics, logger: Logger(level: .info, sink: log))
            var ledger = EndDeliveryQueries.Outcome()
            ledger.holdsCapped = 2
            let outcome = await SessionFanout(context: context).retryEnds(SessionFanout.RecoveryWait(), ledger: ledger, job: .end(stream: "s"),
                                                                          platform: "ios", what: "end push", [:], reason: "end_push_retry")
            #expect(outcome == nil, "nothing is retried")
            #expect(metrics.cappedHolds.value == ["ios": 2])
            let capped = log.lines.filter { $0.contains("outlasts the dismissal window") }
            #expect(capped.count == 1)
            #expect(capped.allSatisfy { $0.contains("\"job\":\"end:s\"") }, "logged with the job's id: \(capped)")
        }
    }

    /// SPEC 10.1: an end job that finds a session held by a `Retry-After` (here by a worker without an id) looks
    /// again when the hold ends, not a claim's length later: queuing the job again replaced the schedule of the run
    /// that met the 429. With another session ended meanwhile, it still comes back for the held one.
    @Test func anEndJobFindingAHeldSessionRetriesWhenTheHoldEnds() async throws {
        let gateway = ScriptedGateway(["run-a": .retry(after: .seconds(6), reason: "QUOTA_EXCEEDED")])
        try await Self.with(gateway) { handler, db, _ in
            try await Self.seedCancelled(db)
            try await db.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'a', 'u', 'run-a')")
            // The hold ends 6 s after the 429; each later look finds it that much nearer as time passes (on a loaded
            // machine seconds may pass between the calls), and never further than 6 s.
            let refusedBy = ContinuousClock.now
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after >= .seconds(6))
            func holdLeft() -> Duration { .seconds(6) - (ContinuousClock.now - refusedBy) - .seconds(1) }

            let again = try await handler.handle(.end(stream: "s"))
            guard case .retry(let wait?, _) = again else { Issue.record("expected a retry, got \(again)"); return }
            #expect(wait > min(.seconds(4), holdLeft()) && wait <= .seconds(6), "looks again when a's hold ends, not after a claim (\(wait))")
            #expect(gateway.sent.value == ["run-a"])

            try await db.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'b', 'u', 'run-b')")
            let mixed = try await handler.handle(.end(stream: "s"))
            guard case .retry(let held?, _) = mixed else { Issue.record("expected a retry, got \(mixed)"); return }
            #expect(held > min(.seconds(4), holdLeft()) && held <= .seconds(6), "b's end went; a's is still to go (\(held))")
            #expect(gateway.sent.value == ["run-a", "run-b"])
        }
    }

    /// viewerCount: participants and users with a reminder that is not cancelled, each person once, counted when
    /// the push is built.
    @Test func viewerCountCountsThePeopleWaiting() async throws {
        let gateway = ScriptedGateway([:])
        try await Self.with(gateway) { handler, db, _ in
            try await db.execute("INSERT INTO users (id, display_name) SELECT u, u FROM unnest(ARRAY['host', 'guest', 'fan', 'gone']) u")
            try await db.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ('h', 'host', 'ios', 'fcm-h', 'pts-h')")
            try await db.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes')")
            try await db.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('s', 'host', 'creator', 0), ('s', 'guest', 'guest', 1)")
            try await db.execute("""
                INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ('s', 'fan', 'active'), ('s', 'guest', 'active'), ('s', 'gone', 'cancelled')
                """)
            _ = try await handler.handle(.start(stream: "s"))
            let payload = try #require(gateway.payloads.value.first)
            #expect(payload.contains(#""viewerCount":3"#), "\(payload)")
        }
    }
}
