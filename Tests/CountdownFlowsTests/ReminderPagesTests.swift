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
    final class NotificationGateway: OnePushGateway {
        let sent = Locked([String]())
        /// Runs once, at the first send, before it is answered.
        let beforeFirstAnswer = Locked<(@Sendable () async -> Void)?>(nil)

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .notification(_, let fcm) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append(fcm) }
            let hook = beforeFirstAnswer.withLock { hook in
                defer { hook = nil }
                return hook
            }
            await hook?()
            return .accepted(name: "projects/p/messages/\(fcm)")
        }
    }

    /// What a fan-out counted and logged.
    struct Observed {
        let metrics: CountingFlowMetrics
        let log: CapturingLogSink
    }

    /// `users` users, each with one device and an active reminder for stream `stream`, due now.
    static func withStream(users: Int, stream: String = "s",
                           _ body: (JobHandler, PostgresClient, NotificationGateway, Observed) async throws -> Void) async throws {
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
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'S', now() + interval '5 minutes')", [stream])
                try c.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, 'u00001', 'creator')", [stream])
                try c.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT $1, id FROM users", [stream])
            }
            let gateway = NotificationGateway()
            let observed = Observed(metrics: CountingFlowMetrics(), log: CapturingLogSink())
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(reminderLeadSeconds: 600),
                                      transport: .fcm, metrics: observed.metrics, logger: Logger(level: .error, sink: observed.log))
            try await body(JobHandler(context: context), client, gateway, observed)
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
        try await Self.withStream(users: users) { handler, db, gateway, _ in
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
        try await Self.withStream(users: 120) { handler, db, gateway, _ in
            let outcome = try await handler.handle(.reminder(stream: "s"))
            #expect(outcome == .done(detail: "reminded 120 users"))
            #expect(gateway.sent.value.count == 120)
            #expect(try await Self.activeReminders(db) == 0)
        }
    }

    /// Once the planned start has come (by PostgreSQL's clock, here moved there while the first chunk is sent), the
    /// fan-out sends no further chunk: the job is skipped as `too_late` and the devices reached are counted.
    @Test func aFanOutThatReachesThePlannedStartStopsSending() async throws {
        let users = ReminderFanout.chunkSize * 2 + 10
        try await Self.withStream(users: users) { handler, db, gateway, observed in
            gateway.beforeFirstAnswer.withLock { hook in
                hook = { _ = try? await db.execute("UPDATE streams SET planned_start_at = now() - interval '1 second' WHERE id = 's'") }
            }
            let outcome = try await handler.handle(.reminderPage(stream: "s", after: "", through: nil))
            #expect(outcome == .skipped(reason: "too_late"))
            let sent = gateway.sent.value.count
            // The second chunk may have been read before the move; the third never goes out.
            #expect(sent == ReminderFanout.chunkSize || sent == ReminderFanout.chunkSize * 2)
            #expect(observed.metrics.skips.value["reminder/too_late"] == (sent == ReminderFanout.chunkSize ? ReminderFanout.chunkSize : 10))
            #expect(try await Self.activeReminders(db) == users - sent, "the reminders not sent stay active")
        }
    }

    @Test func aPageOfACancelledStreamSendsNothing() async throws {
        try await Self.withStream(users: 10) { handler, db, gateway, _ in
            try await db.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's'")
            let outcome = try await handler.handle(.reminderPage(stream: "s", after: "", through: nil))
            #expect(outcome == .skipped(reason: "stream_cancelled"))
            #expect(gateway.sent.value.isEmpty)
        }
    }

    /// A notification that cannot be built (here: a stream id longer than a payload may carry) is counted and
    /// logged, and its users stay active for the reconciler's next run; nothing is sent, nothing marked sent.
    @Test func aNotificationThatCannotBeBuiltIsCountedLoggedAndLeftActive() async throws {
        let stream = String(repeating: "x", count: PushPayloadBuilder.maxStreamIdBytes + 1)
        try await Self.withStream(users: 10, stream: stream) { handler, db, gateway, observed in
            _ = try await handler.handle(.reminder(stream: stream))
            #expect(gateway.sent.value.isEmpty)
            #expect(try await Self.activeReminders(db) == 10)
            #expect(observed.metrics.skips.value["reminder/payload_error"] == 10)
            let errors = observed.log.lines.filter { $0.contains("reminder payload could not be built") }
            #expect(errors.count == 1, "one line per language and chunk, not per user: \(observed.log.lines)")
        }
    }
}
