import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import TestSupport
import Testing

/// Sessions per activity (SPEC 12.1): a device with two activities of a stream (the newest in
/// `live_activity_sessions`, the older in `countdown_activity_sessions`) gets every update and the end on both, and
/// what one activity accepted does not count for the other.
@Suite struct ActivitySessionFlowTests {
    /// Records each live activity push as "event token"; answers `retry` to the tokens in `failing` as many times as
    /// given, accepts the rest.
    final class ActivityGateway: OnePushGateway {
        let sent = Locked([String]())
        let failing: Locked<[String: Int]>

        init(failing: [String: Int]) { self.failing = Locked(failing) }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .liveActivity(let payload, _, let token) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append("\(payload.event.rawValue) \(token)") }
            let fail = failing.withLock { left -> Bool in
                guard let count = left[token], count > 0 else { return false }
                left[token] = count - 1
                return true
            }
            return fail ? .retry(after: nil, reason: "UNAVAILABLE") : .accepted(name: "projects/p/messages/\(token)")
        }

        /// What was sent since the last call.
        func drain() -> [String] { sent.withLock { sent in defer { sent = [] }; return sent.sorted() } }
    }

    /// Stream `s` with device d1 holding activity A (older, token `run-a`) and B (newest, `run-b`), and device d2 with
    /// one activity (`run-c`); their push-to-starts went out a minute ago.
    static func with(failing: [String: Int], _ body: (JobHandler, PostgresClient, ActivityGateway) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "activities") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2"])], on: connection)
                try connection.execute("""
                    INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at)
                    SELECT 's', user_id, device_id, 'sent', now() - interval '1 minute' FROM devices
                    """)
                for (device, token, activity) in [("d1", "run-a", "A"), ("d1", "run-b", "B"), ("d2", "run-c", "C")] {
                    #expect(try SessionQueries.register(stream: "s", device: device, user: "u1", token: token, activity: activity, on: connection)
                            == .registered)
                }
            }
            let gateway = ActivityGateway(failing: failing)
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            try await body(JobHandler(context: context), client, gateway)
        }
    }

    static func sessions(_ client: PostgresClient) async throws -> Int {
        try await client.query("""
            SELECT (SELECT count(*) FROM live_activity_sessions) + (SELECT count(*) FROM countdown_activity_sessions) AS n
            """)[0].decode("n", as: Int.self)
    }

    @Test func anUpdateReachesBothActivitiesAndARetrySendsOnlyToTheOneThatDidNotAcceptIt() async throws {
        try await Self.with(failing: ["run-a": 1]) { handler, db, gateway in
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '20 minutes' WHERE id = 's'")
            guard case .retry = try await handler.handle(.update(stream: "s")) else { Issue.record("expected a retry"); return }
            #expect(gateway.drain() == ["update run-a", "update run-b", "update run-c"])
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.drain() == ["update run-a"], "the activity that accepted it is not sent it again")
            try await db.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '20 minutes' WHERE id = 's'")
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.drain() == ["update run-a", "update run-b", "update run-c"])
        }
    }

    @Test func anEndReachesBothActivitiesAndARetryEndsOnlyTheOneThatRefusedIt() async throws {
        try await Self.with(failing: ["run-a": 1]) { handler, db, gateway in
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            guard case .retryOnSchedule = try await handler.handle(.end(stream: "s")) else { Issue.record("expected a retry"); return }
            #expect(gateway.drain() == ["end run-a", "end run-b", "end run-c"])
            #expect(try await Self.sessions(db) == 1, "only the activity whose end was refused is left")
            let attempts = try await db.query("SELECT device_id || ' ' || activity_id AS a FROM countdown_end_attempts")
            #expect(try attempts.map { try $0.decode("a", as: String.self) } == ["d1 A"])
            guard case .done = try await handler.handle(.end(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.drain() == ["end run-a"], "the ended activities are not sent it again")
            #expect(try await Self.sessions(db) == 0)
            #expect(try await db.query("SELECT 1 FROM countdown_end_attempts").isEmpty)
        }
    }

    @Test func anEndRefusedForTheNewestActivityIsRetriedForItAlone() async throws {
        try await Self.with(failing: ["run-b": 1]) { handler, db, gateway in
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            guard case .retryOnSchedule = try await handler.handle(.end(stream: "s")) else { Issue.record("expected a retry"); return }
            #expect(gateway.drain() == ["end run-a", "end run-b", "end run-c"])
            guard case .done = try await handler.handle(.end(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.drain() == ["end run-b"])
            #expect(try await Self.sessions(db) == 0)
        }
    }
}
