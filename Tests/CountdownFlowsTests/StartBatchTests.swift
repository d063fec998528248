import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// Start jobs claimed together are fanned out in one batch: each stream keeps its own decision and outcome.
@Suite struct StartBatchTests {
    /// Accepts every push except those to `refused` FCM tokens (dead), and records them all.
    final class RecordingGateway: OnePushGateway {
        let sent = Locked([String]())
        let dead: Set<String>

        init(dead: Set<String> = []) { self.dead = dead }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .liveActivity(_, let fcm, _) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append(fcm) }
            return dead.contains(fcm) ? .tokenRefused(.fcm, reason: "UNREGISTERED") : .accepted(name: "projects/p/messages/\(fcm)")
        }
    }

    static func withHandler(dead: Set<String> = [], _ body: (JobHandler, PostgresClient, RecordingGateway) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "batch") { client in
            let gateway = RecordingGateway(dead: dead)
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(startLeadSeconds: 3600),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            try await body(JobHandler(context: context), client, gateway)
        }
    }

    @Test func eachStreamOfABatchGetsItsOwnOutcome() async throws {
        try await Self.withHandler(dead: ["fcm-b2"]) { handler, db, gateway in
            try await db.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) SELECT u, 'User ' || u FROM unnest($1::text[]) u",
                              [PostgresTextArray(["a", "b", "c", "d"])])
                // a: two eligible devices; b: one eligible, one dead; c: only an android device; d's stream is cancelled.
                try c.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
                      ('a1', 'a', 'ios', 'fcm-a1', 'pts-a1'), ('a2', 'a', 'ios', 'fcm-a2', 'pts-a2'),
                      ('b1', 'b', 'ios', 'fcm-b1', 'pts-b1'), ('b2', 'b', 'ios', 'fcm-b2', 'pts-b2'),
                      ('c1', 'c', 'android', 'fcm-c1', NULL), ('d1', 'd', 'ios', 'fcm-d1', 'pts-d1')
                    """)
                try c.execute("""
                    INSERT INTO streams (id, title, planned_start_at, status) VALUES
                      ('sa', 'A', now() + interval '30 minutes', 'scheduled'), ('sb', 'B', now() + interval '30 minutes', 'scheduled'),
                      ('sc', 'C', now() + interval '30 minutes', 'scheduled'), ('sd', 'D', now() + interval '30 minutes', 'cancelled'),
                      ('later', 'Later', now() + interval '3 hours', 'scheduled')
                    """)
                try c.execute("""
                    INSERT INTO stream_participants (stream_id, user_id, role) VALUES
                      ('sa', 'a', 'creator'), ('sb', 'b', 'creator'), ('sc', 'c', 'creator'), ('sd', 'd', 'creator'), ('later', 'a', 'creator')
                    """)
            }
            let outcomes = try await handler.handleStarts(["sa", "sb", "sc", "sd", "later", "gone", "sa"])
            #expect(outcomes.count == 6)
            #expect(outcomes["sa"] == .done(detail: "sent 2 of 2 claimed, 2 devices considered"))
            #expect(outcomes["sb"] == .done(detail: "sent 1 of 2 claimed, 2 devices considered"))
            #expect(outcomes["sc"] == .done(detail: "sent 0 of 0 claimed, 1 devices considered"))
            #expect(outcomes["sd"] == .skipped(reason: "stream_cancelled"))
            #expect(outcomes["gone"] == .skipped(reason: "stream_missing"))
            guard case .reschedule(let after, _) = outcomes["later"] else {
                Issue.record("the stream outside its window is rescheduled: \(String(describing: outcomes["later"]))")
                return
            }
            #expect(after > .seconds(7100) && after < .seconds(7300), "the window opens 2 h from now")
            #expect(Set(gateway.sent.value) == ["fcm-a1", "fcm-a2", "fcm-b1", "fcm-b2"])
            #expect(gateway.sent.value.count == 4, "once each")

            let ledger = try await db.query("""
                SELECT stream_id || '/' || device_id || '=' || status || coalesce(':' || reason, '') AS row
                FROM countdown_start_ledger ORDER BY 1
                """).map { try $0.decode("row", as: String.self) }
            #expect(ledger == ["sa/a1=sent", "sa/a2=sent", "sb/b1=sent", "sb/b2=failed:dead_token:UNREGISTERED", "sc/c1=skipped:not_ios"])
            let done = try await db.query("SELECT stream_id FROM countdown_stream_progress WHERE start_done_for IS NOT NULL ORDER BY 1")
                .map { try $0.decode("stream_id", as: String.self) }
            #expect(done == ["sa", "sb", "sc"])
            let cleared: String? = try await db.query("SELECT fcm_token FROM devices WHERE device_id = 'b2'")[0].decode("fcm_token")
            #expect(cleared == nil)

            // Running the same batch again sends nothing more.
            let again = try await handler.handleStarts(["sa", "sb", "sc"])
            #expect(again["sa"] == .done(detail: "sent 0 of 0 claimed, 2 devices considered"))
            #expect(gateway.sent.value.count == 4)
        }
    }
}
