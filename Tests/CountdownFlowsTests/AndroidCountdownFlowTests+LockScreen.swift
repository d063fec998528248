import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import Foundation
import Postgres
import PushPayloads
import Telemetry
import TestSupport
import Testing

/// The Android countdown beside the lock-screen flows of SPEC 10.1: an update job a runtime-session registration
/// runs sends an Android device nothing when its start already carried the current planned start, and a long
/// reschedule starts iOS activities again but never an Android countdown (once per device and stream); an Android
/// end the push service refused waits for its recovery as an iOS end does.
extension AndroidCountdownFlowTests {
    /// Records the jobs handed to the end recovery waits.
    final class RecordingRecovery: EndRecoveryWaits {
        let waiting = Locked([String]())
        func awaitRecovery(_ job: CountdownJob, notBefore: Duration) async {
            waiting.withLock { $0.append("\(job) \(notBefore)") }
        }
    }

    @Test func anAndroidEndTheServiceRefusedWaitsForItsRecovery() async throws {
        try await MigratedDatabase.with(prefix: "android_recovery") { client in
            // Only Android countdowns (no iOS device), so the iOS part of the end job hands nothing to the waits.
            try await Self.seed(client)
            try await client.execute("DELETE FROM devices WHERE platform = 'ios'")
            let gateway = Gateway([:])
            let recovery = RecordingRecovery()
            var settings = FlowSettings(startLeadSeconds: 3600)
            settings.androidCountdownEnabled = true
            let handler = JobHandler(context: FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: settings,
                                                          transport: .fcm, metrics: CountingFlowMetrics(),
                                                          logger: Logger(level: .error, sink: CapturingLogSink()), endRecovery: recovery))
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            try await client.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            gateway.answers.withLock { $0 = ["fcm-g-and": .retry(after: .seconds(2), reason: "QUOTA_EXCEEDED")] }
            let outcome = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(_, let reason) = outcome else { Issue.record("expected a retry, got \(outcome)"); return }
            #expect(reason == "android_end_retry")
            #expect(recovery.waiting.value == ["\(CountdownJob.end(stream: "s")) \(Duration.seconds(2))"], "not before the Retry-After")

            gateway.answers.withLock { $0 = [:] }
            _ = gateway.takeAll()
            // The Retry-After has passed.
            try await client.execute("UPDATE countdown_start_ledger SET android_claimed_until = now() - interval '1 millisecond' WHERE android_claimed_until IS NOT NULL")
            let again = try await handler.handle(.end(stream: "s"))
            guard case .done = again else { Issue.record("expected done, got \(again)"); return }
            #expect(gateway.takeAndroid() == ["end fcm-g-and end 3"], "only the end not yet accepted")
            #expect(recovery.waiting.value.count == 1)
        }
    }

    /// SPEC 10.1: a 429's `Retry-After` holds the device's end for every end job of the stream, not only for the
    /// job that met it: the stream's end job queued again meanwhile (a second status change, the reconciler) sends
    /// that device nothing until it has passed.
    @Test func aRetryAfterHoldsTheAndroidEndForEveryEndJob() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            gateway.answers.withLock { $0 = ["fcm-c-and": .retry(after: .seconds(6), reason: "QUOTA_EXCEEDED")] }
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after >= .seconds(6), "the job itself waits for the Retry-After")
            #expect(gateway.takeAndroid().sorted() == ["end fcm-c-and end 2", "end fcm-g-and end 2"])

            let early = try await handler.handle(.end(stream: "s"))
            #expect(gateway.takeAndroid().isEmpty, "the end job run again leaves c-and's end to its Retry-After")
            guard case .retry(let wait?, _) = early else { Issue.record("expected a retry, got \(early)"); return }
            #expect(wait > .seconds(4) && wait <= .seconds(6), "the job looks again when the hold ends, not after a claim (\(wait))")
            #expect(try await Self.ledger(db).contains("c-and=sent/2"))

            // Once the Retry-After has passed, c-and's end goes again.
            gateway.answers.withLock { $0 = [:] }
            try await db.execute("UPDATE countdown_start_ledger SET android_claimed_until = now() - interval '1 millisecond' WHERE android_claimed_until IS NOT NULL")
            let last = try await handler.handle(.end(stream: "s"))
            guard case .done = last else { Issue.record("expected done, got \(last)"); return }
            #expect(gateway.takeAndroid() == ["end fcm-c-and end 3"])
        }
    }

    /// A `Retry-After` longer than the dismissal window holds the Android end only until the window closes, counted.
    @Test func aRetryAfterPastTheDismissalWindowHoldsTheAndroidEndOnlyUntilItCloses() async throws {
        try await Self.with { handler, db, gateway, metrics in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            gateway.answers.withLock { $0 = ["fcm-c-and": .retry(after: .seconds(86_400), reason: "QUOTA_EXCEEDED")] }
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            let first = try await handler.handle(.end(stream: "s"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after <= .seconds(900), "the job comes back within the window (\(after))")
            let held: Double = try await db.query("""
                SELECT extract(epoch FROM android_claimed_until - now())::float8 AS s FROM countdown_start_ledger WHERE device_id = 'c-and'
                """)[0].decode("s")
            #expect(held > 880 && held <= 900, "held until the window closes, not for a day (\(held) s)")
            #expect(metrics.cappedHolds.value == ["android": 1])
        }
    }

    @Test func anUpdateJobWithoutAMoveSinceTheStartSendsAndroidNothing() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            // The update job a runtime-session registration queues: the starts carried the current planned start.
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid().isEmpty, "the starts show the current planned start")

            // A start that went out before the planned start moved is updated.
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '5 minutes' WHERE id = 's'")
            try await db.execute("UPDATE countdown_start_ledger SET sent_at = now() - interval '1 minute'")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid().sorted() == ["update fcm-c-and update 2", "update fcm-g-and update 2"])
        }
    }

    /// A start resent after a crash carries `seq` 1 again, which an app that applied the first send ignores; when the
    /// stream moved in between, the resend's time proves nothing: a start that took more than one attempt on a
    /// rescheduled stream is followed by an update (seq 2).
    @Test func aStartThatTookTwoAttemptsOnAMovedStreamIsFollowedByAnUpdate() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '5 minutes' WHERE id = 's'")
            // Both starts went out well after the move, as a resend after a crash does; one took two attempts.
            try await db.execute("UPDATE countdown_stream_progress SET planned_changed_at = now() - interval '1 minute' WHERE stream_id = 's'")
            try await db.execute("UPDATE countdown_start_ledger SET sent_at = now(), attempts = CASE WHEN device_id = 'g-and' THEN 2 ELSE 1 END")
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid() == ["update fcm-g-and update 2"])
        }
    }

    /// SPEC 12.2: a device shows the planned start of the last message it accepted, a re-registration's start included:
    /// the next update's priority is judged against it.
    @Test func anUpdateAfterAReRegistrationStartIsJudgedAgainstThatStart() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            // Moved to 10 minutes ahead (no update job yet); g-and re-registers and gets a start with that time.
            try await db.execute("UPDATE streams SET planned_start_at = now() + interval '10 minutes' WHERE id = 's'")
            try await db.execute("UPDATE devices SET fcm_token = 'fcm-g-and-2' WHERE device_id = 'g-and'")
            _ = try await handler.handle(.backfillDevice(device: "g-and"))
            _ = gateway.takeAll()
            // Moved an hour ahead: g-and shows a start 10 minutes away (HIGH), c-and its first start, 30 minutes away (NORMAL).
            try await db.execute("UPDATE streams SET planned_start_at = now() + interval '1 hour' WHERE id = 's'")
            _ = try await handler.handle(.update(stream: "s"))
            let priorities = gateway.sent.value.compactMap { push in push.message.map { "\(push.fcm) \($0.priority.rawValue)" } }.sorted()
            #expect(priorities == ["fcm-c-and NORMAL", "fcm-g-and-2 HIGH"])
        }
    }

    /// SPEC 12.2, the long move: the iOS activity that would outlive its 8 hours ends saying the stream moved, and to
    /// when (no `endedReason`, seen for the dismissal window); an Android countdown has no 8-hour life and is updated.
    @Test func aLongMoveEndsTheIOSActivitySayingWhereToAndUpdatesAndroid() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            try await db.execute("UPDATE devices SET locale = 'en', timezone = 'Europe/Istanbul' WHERE device_id = 'c-ios'")
            _ = try await handler.handle(.start(stream: "s"))
            try await db.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'c-ios', 'c', 'r-c-ios')")
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '9 hours' WHERE id = 's'")
            _ = gateway.takeAll()
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.takeAndroid().sorted() == ["update fcm-c-and update 2", "update fcm-g-and update 2"])

            _ = try await handler.handle(.sessionEnd(stream: "s", device: "c-ios"))
            let end = try #require(gateway.sent.value.compactMap(\.payload).first)
            #expect(end.event == .end && gateway.sent.value.count == 1)
            let aps = try #require((try JSONSerialization.jsonObject(with: Data(end.apsJSON)) as? [String: Any])?["aps"] as? [String: Any])
            let state = try #require(aps["content-state"] as? [String: Any])
            #expect(state["displayState"] as? String == "ended")
            #expect(state["endedReason"] == nil, "not cancelled: the stream moved")
            #expect(state["statusText"] as? String == "The stream has moved")
            let planned = try await db.query("SELECT planned_start_at FROM streams WHERE id = 's'")[0].decode("planned_start_at", as: Date.self)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try #require(TimeZone(identifier: "Europe/Istanbul"))
            let parts = calendar.dateComponents([.hour, .minute], from: planned)
            let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
            #expect((state["subtitle"] as? String)?.hasPrefix("New time: ") == true && (state["subtitle"] as? String)?.hasSuffix(time) == true,
                    "\(state["subtitle"] ?? "") in the device's time zone, \(time)")
            #expect(aps["dismissal-date"] as? Int == (aps["timestamp"] as? Int).map { $0 + 900 }, "seen for END_DISMISS_AFTER_SECONDS")
            #expect(try await db.query("SELECT count(*) AS n FROM countdown_retired_sessions")[0].decode("n", as: Int.self) == 0)
        }
    }

    @Test func aLongRescheduleStartsIOSAgainButNotAndroid() async throws {
        try await Self.with { handler, db, gateway, _ in
            try await Self.seed(db)
            _ = try await handler.handle(.start(stream: "s"))
            _ = gateway.takeAll()
            // Every start went out 9 hours before the planned start (the stream moved since).
            try await db.execute("""
                UPDATE countdown_start_ledger SET sent_at = (SELECT planned_start_at FROM streams WHERE id = 's') - interval '9 hours'
                WHERE status = 'sent'
                """)
            try await db.execute("DELETE FROM countdown_stream_progress")
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.takeAll() == ["start fcm-c-ios"], "only the iOS device gets a new push-to-start")
            let generations = try await db.query("""
                SELECT device_id || ':' || generation AS g FROM countdown_start_ledger WHERE status = 'sent' ORDER BY device_id
                """).map { try $0.decode("g", as: String.self) }
            #expect(generations == ["c-and:1", "c-ios:2", "g-and:1"])
        }
    }
}
