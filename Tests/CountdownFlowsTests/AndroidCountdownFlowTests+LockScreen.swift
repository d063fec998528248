import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import Foundation
import Postgres
import PushPayloads
import Telemetry
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
            guard case .retry(_, let reason) = outcome else { Issue.record("expected a retry, got \(outcome)"); return }
            #expect(reason == "android_end_retry")
            #expect(recovery.waiting.value == ["\(CountdownJob.end(stream: "s")) \(Duration.seconds(2))"], "not before the Retry-After")

            gateway.answers.withLock { $0 = [:] }
            _ = gateway.takeAll()
            let again = try await handler.handle(.end(stream: "s"))
            guard case .done = again else { Issue.record("expected done, got \(again)"); return }
            #expect(gateway.takeAndroid() == ["end fcm-g-and end 3"], "only the end not yet accepted")
            #expect(recovery.waiting.value.count == 1)
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
