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

/// SPEC 10.1, long reschedules: a device whose push-to-start went out more than 8 hours before the (new) planned
/// start has its activity ended at once (immediate dismissal, nothing more) and gets a new push-to-start.
@Suite struct LongRescheduleTests {
    /// Accepts every live-activity push and records its event and token.
    final class AcceptingGateway: OnePushGateway {
        let sent = Locked([(event: LiveActivityEvent, token: String)]())

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .liveActivity(let payload, _, let token) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append((payload.event, token)) }
            return .accepted(name: "projects/p/messages/\(token)")
        }

        func tokens(_ event: LiveActivityEvent) -> Set<String> { Set(sent.value.filter { $0.event == event }.map(\.token)) }
    }

    @Test func anOutlivedActivityIsEndedAndItsDeviceStartedAgain() async throws {
        try await MigratedDatabase.with(prefix: "lifetime") { client in
            try await client.transaction { connection in
                try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2"])], on: connection)
                // d1's activity started 9 hours before the planned start (the stream moved since), d2's a minute ago.
                try connection.execute("""
                    INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at) VALUES
                    ('s', 'u1', 'd1', 'sent', (SELECT planned_start_at FROM streams WHERE id = 's') - interval '9 hours'),
                    ('s', 'u1', 'd2', 'sent', now() - interval '1 minute')
                    """)
                try connection.execute("""
                    INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'd1', 'u1', 'r-d1'), ('s', 'd2', 'u1', 'r-d2')
                    """)
            }
            let gateway = AcceptingGateway()
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            let handler = JobHandler(context: context)

            // The update the move queued: d1's session is retired (ended at once), d2's shows the current start.
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.tokens(.update).isEmpty, "d2 shows the current start; d1 gets nothing more")
            let retired = try await client.query("SELECT device_id || ':' || reason AS r FROM countdown_retired_sessions WHERE stream_id = 's'")
                .map { try $0.decode("r", as: String.self) }
            #expect(retired == ["d1:activity_lifetime"])
            let live = try await client.query("SELECT device_id FROM live_activity_sessions WHERE stream_id = 's'").map { try $0.decode("device_id", as: String.self) }
            #expect(live == ["d2"])

            // The stream's start job: d1 gets a new push-to-start (the ledger row's next generation), d2 nothing.
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.tokens(.start) == ["pts-d1"])
            let generations = try await client.query("SELECT device_id || ':' || generation AS g FROM countdown_start_ledger WHERE stream_id = 's' ORDER BY device_id")
                .map { try $0.decode("g", as: String.self) }
            #expect(generations == ["d1:2", "d2:1"])
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.sent.value.filter { $0.event == .start }.count == 1, "one start per generation")
        }
    }

    /// Stream `s` with devices `d1` and `d2` (user `u1`), both started a minute ago, `d1` with its session, then moved
    /// 9 hours later; the handler of a context whose gateway accepts everything.
    private static func movedNineHours(_ client: PostgresClient) async throws -> (JobHandler, AcceptingGateway) {
        try await client.transaction { connection in
            try MigratedDatabase.seedStream("s", [("u1", "creator", ["d1", "d2"])], on: connection)
            try connection.execute("INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at) SELECT 's', 'u1', d, 'sent', now() - interval '1 minute' FROM unnest(ARRAY['d1', 'd2']) AS d")
            try connection.execute(Self.sessionSQL("d1"))
            try connection.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '9 hours' WHERE id = 's'")
        }
        let gateway = AcceptingGateway()
        let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(),
                                  transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
        return (JobHandler(context: context), gateway)
    }

    private static func sessionSQL(_ device: String) -> String {
        "INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', '\(device)', 'u1', 'r-\(device)')"
    }

    private static func generation(_ client: PostgresClient, _ device: String) async throws -> Int {
        try await client.query("SELECT generation FROM countdown_start_ledger WHERE stream_id = 's' AND device_id = $1", [device])[0]
            .decode("generation", as: Int.self)
    }

    private static func retired(_ client: PostgresClient, _ device: String) async throws -> Int {
        try await client.query("SELECT count(*) AS n FROM countdown_retired_sessions WHERE stream_id = 's' AND device_id = $1", [device])[0]
            .decode("n", as: Int.self)
    }

    /// A stream moved 9 hours later, then back before the new T-lead (found by chaos scenario 20): the device whose
    /// activity was ended at the first move gets a new push-to-start from the stream's start job.
    @Test func aStreamMovedBackAfterALongRescheduleStartsTheDeviceAgain() async throws {
        try await MigratedDatabase.with(prefix: "lifeback") { client in
            let (handler, gateway) = try await Self.movedNineHours(client)
            _ = try await handler.handle(.update(stream: "s"))
            #expect(try await Self.retired(client, "d1") == 1, "the outlived activity is ended at once")
            // Moved back inside the start window: 8 hours after the first push-to-start no longer separate them.
            try await client.execute("UPDATE streams SET planned_start_at = now() + interval '20 minutes' WHERE id = 's'")
            _ = try await handler.handle(.start(stream: "s"))
            #expect(gateway.tokens(.start) == ["pts-d1", "pts-d2"], "the devices show nothing unless they get a new push-to-start")
            #expect(try await Self.generation(client, "d1") == 2)
        }
    }

    /// A session registered after the update job already reopened its device's row (the app was slow; found by chaos
    /// scenario 20): its activity still outlives the new start, so it is ended at once too, not left showing the old one.
    @Test func aSessionRegisteredAfterTheRowWasReopenedIsEndedToo() async throws {
        try await MigratedDatabase.with(prefix: "lifelate") { client in
            let (handler, gateway) = try await Self.movedNineHours(client)
            // d1's outlived session reopens both rows; d2's app registers its session only now.
            _ = try await handler.handle(.update(stream: "s"))
            try await client.execute(Self.sessionSQL("d2"))
            _ = try await handler.handle(.update(stream: "s"))
            #expect(gateway.tokens(.update).isEmpty)
            #expect(try await Self.retired(client, "d2") == 1, "the late session's activity is ended at once")
            #expect(try await Self.generation(client, "d2") == 2, "reopened once")
        }
    }
}
