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

/// A large reminder fan-out is split into page jobs that any worker runs; each reminder goes out once.
@Suite struct ReminderPagesTests {
    /// Accepts every notification and records its FCM token.
    final class NotificationGateway: PushGateway {
        let sent = Locked([String]())

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .notification(_, let fcm) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append(fcm) }
            return .accepted(name: "projects/p/messages/\(fcm)")
        }
    }

    /// `users` users, each with one device and an active reminder for stream `s`, due now.
    static func withStream(users: Int, _ body: (JobHandler, PostgresClient, NotificationGateway) async throws -> Void) async throws {
        let database = try await TestDatabase.create(prefix: "pages")
        let client = PostgresClient(configuration: database.configuration, maxConnections: 2)
        do {
            _ = try await Migrator().migrate(client)
            try await client.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) SELECT 'u' || lpad(i::text, 5, '0'), 'U' FROM generate_series(1, $1) i", [users])
                try c.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token)
                    SELECT 'd' || id, id, 'ios', 'fcm-' || id FROM users
                    """)
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '5 minutes')")
                try c.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'u00001', 'creator')")
                try c.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 's', id FROM users")
            }
            let gateway = NotificationGateway()
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(reminderLeadSeconds: 600),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            try await body(JobHandler(context: context), client, gateway)
            client.close()
            try await database.drop()
        } catch {
            client.close()
            try? await database.drop()
            throw error
        }
    }

    static func activeReminders(_ db: PostgresClient) async throws -> Int {
        try await db.query("SELECT count(*) AS n FROM stream_reminders WHERE status = 'active'").first?.decode("n", as: Int.self) ?? -1
    }

    @Test func moreThanOnePageIsHandedOnAsPagesThatTogetherRemindEveryoneOnce() async throws {
        let users = ReminderFanout.chunkSize * 2 + 500
        try await Self.withStream(users: users) { handler, db, gateway in
            let outcome = try await handler.handle(.reminder(stream: "s"))
            guard case .fanOut(let pages, _) = outcome else {
                Issue.record("expected page jobs, got \(outcome)")
                return
            }
            #expect(pages.count == 3)
            #expect(pages.first == .reminderPage(stream: "s", after: "", through: String(format: "u%05d", ReminderFanout.chunkSize)))
            #expect(pages.last.map { if case .reminderPage(_, _, nil) = $0 { true } else { false } } == true, "the last page runs to the end")
            #expect(gateway.sent.value.isEmpty, "the reminder job itself sends nothing")
            let done = try await db.query("SELECT reminder_done_for IS NOT NULL AS done FROM countdown_stream_progress WHERE stream_id = 's'")
            #expect(try done.first?.decode("done", as: Bool.self) == true)
            // Pages run concurrently, as on several workers.
            let outcomes = try await withThrowingTaskGroup(of: HandlerOutcome.self) { group in
                for page in pages { group.addTask { try await handler.handle(page) } }
                return try await group.reduce(into: [HandlerOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { if case .done = $0 { true } else { false } })
            let sent = gateway.sent.value
            #expect(sent.count == users)
            #expect(Set(sent).count == users, "nobody reminded twice")
            #expect(try await Self.activeReminders(db) == 0)
            // A page run again (a retry, a duplicate) finds nobody left.
            _ = try await handler.handle(pages[0])
            #expect(gateway.sent.value.count == users)
        }
    }

    @Test func onePageIsSentByTheReminderJobItself() async throws {
        try await Self.withStream(users: 120) { handler, db, gateway in
            let outcome = try await handler.handle(.reminder(stream: "s"))
            #expect(outcome == .done(detail: "reminded 120 users"))
            #expect(gateway.sent.value.count == 120)
            #expect(try await Self.activeReminders(db) == 0)
        }
    }

    @Test func aPageOfACancelledStreamSendsNothing() async throws {
        try await Self.withStream(users: 10) { handler, db, gateway in
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            let outcome = try await handler.handle(.reminderPage(stream: "s", after: "", through: nil))
            #expect(outcome == .skipped(reason: "stream_cancelled"))
            #expect(gateway.sent.value.isEmpty)
        }
    }
}
