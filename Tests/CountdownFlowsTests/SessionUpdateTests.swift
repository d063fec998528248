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

/// SPEC 10.1: updates go to the sessions that do not show the current start, once each; a retry resends only to the
/// sessions whose update was not accepted; a session registered after a reschedule gets the current state.
@Suite struct SessionUpdateTests {
    /// Records every update by runtime token with its priority; answers `retry` to the tokens in `failing` as many
    /// times as given; runs `duringFirstSend` (once) before it answers the first push.
    final class UpdateGateway: OnePushGateway {
        let sent = Locked([(token: String, priority: String?, expiration: String?)]())
        let failing: Locked<[String: Int]>
        let duringFirstSend: Locked<(@Sendable () async throws -> Void)?>

        init(failing: [String: Int] = [:]) {
            self.failing = Locked(failing)
            duringFirstSend = Locked(nil)
        }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .liveActivity(let payload, _, let token) = push, payload.event == .update else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append((token, payload.apnsHeaders["apns-priority"], payload.apnsHeaders["apns-expiration"])) }
            if let hook = duringFirstSend.withLock({ hook in defer { hook = nil }; return hook }) {
                do { try await hook() } catch { Issue.record("the hook failed: \(error)") }
            }
            let fail = failing.withLock { left -> Bool in
                guard let count = left[token], count > 0 else { return false }
                left[token] = count - 1
                return true
            }
            return fail ? .retry(after: nil, reason: "UNAVAILABLE") : .accepted(name: "projects/p/messages/\(token)")
        }

        func count(_ token: String) -> Int { sent.value.filter { $0.token == token }.count }
        /// The `apns-expiration` (the planned start it carried) of the last update each token got.
        var lastExpiration: [String: String] {
            sent.value.reduce(into: [:]) { last, push in last[push.token] = push.expiration }
        }
    }

    static func with(failing: [String: Int] = [:], claimSeconds: Int = 30, _ body: (JobHandler, PostgresClient, UpdateGateway) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "update") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2"]), ("u2", "guest", ["d3", "d4", "d5", "d6"])], on: connection)
                // Starts accepted a minute ago for d1…d5; sessions of d1…d4 registered since.
                try connection.execute("""
                    INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at)
                    SELECT 's', d.user_id, d.device_id, 'sent', now() - interval '1 minute' FROM devices d WHERE d.device_id <> 'd6'
                    """)
                try connection.execute("""
                    INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token)
                    SELECT 's', device_id, user_id, 'r-' || device_id FROM devices WHERE device_id IN ('d1', 'd2', 'd3', 'd4')
                    """)
            }
            let gateway = UpdateGateway(failing: failing)
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()),
                                      claimSeconds: claimSeconds)
            try await body(JobHandler(context: context), client, gateway)
        }
    }

    static func reschedule(_ client: PostgresClient, by minutes: Int) async throws {
        _ = try await client.withConnection {
            try $0.execute("UPDATE streams SET planned_start_at = planned_start_at + make_interval(mins => $1::int) WHERE id = 's'", [minutes])
        }
    }

    @Test func aRetryResendsOnlyToSessionsWhoseUpdateWasNotAccepted() async throws {
        try await Self.with(failing: ["r-d4": 2]) { handler, db, gateway in
            #expect(try await handler.handle(.update(stream: "s")) == .done(detail: "all 4 sessions show the current start"),
                    "nothing moved since the starts: nothing to send")
            #expect(gateway.sent.value.isEmpty)
            try await Self.reschedule(db, by: 20)
            guard case .retry = try await handler.handle(.update(stream: "s")) else { Issue.record("expected a retry"); return }
            guard case .retry = try await handler.handle(.update(stream: "s")) else { Issue.record("expected a retry"); return }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(["r-d1", "r-d2", "r-d3"].map(gateway.count) == [1, 1, 1], "accepted sessions got the update once")
            #expect(gateway.count("r-d4") == 3)
            let planned = try await db.query("SELECT floor(extract(epoch FROM planned_start_at))::bigint AS p FROM streams WHERE id = 's'")[0]
                .decode("p", as: Int.self)
            #expect(gateway.sent.value.allSatisfy { $0.priority == "5" && $0.expiration == String(planned) },
                    "the sessions show what their starts carried, 30 minutes away: a later start goes at priority 5 (SPEC 12.2); expires at the new start")

            // Later again and more than 15 minutes away: priority 5, each session once more.
            try await Self.reschedule(db, by: 30)
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            let second = gateway.sent.value.dropFirst(6)
            #expect(second.count == 4 && second.allSatisfy { $0.priority == "5" })
            // Earlier: priority 10.
            try await Self.reschedule(db, by: -40)
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.sent.value.dropFirst(10).map(\.priority) == ["10", "10", "10", "10"])
        }
    }

    @Test func aSessionRegisteredAfterARescheduleGetsTheCurrentState() async throws {
        try await Self.with { handler, db, gateway in
            try await Self.reschedule(db, by: 20)
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.sent.value.count == 4)
            // d5's activity was started before the move; d6's start went out well after it (built with the new time).
            _ = try await db.withConnection { connection in
                try connection.execute("""
                    INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at)
                    VALUES ('s', 'u2', 'd6', 'sent', now() + interval '1 minute')
                    """)
                try connection.execute("""
                    INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token)
                    VALUES ('s', 'd5', 'u2', 'r-d5'), ('s', 'd6', 'u2', 'r-d6')
                    """)
            }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.count("r-d5") == 1, "the late session gets the current start")
            #expect(gateway.count("r-d6") == 0, "a session whose start carried the current start gets nothing")
            #expect(gateway.sent.value.count == 5, "the others are not sent it again")
        }
    }
}
