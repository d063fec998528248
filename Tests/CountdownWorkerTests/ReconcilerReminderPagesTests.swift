import CountdownDomain
@testable import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import DelayQueue
import Foundation
import Postgres
import Testing
import TestSupport

/// The reconciler runs a reminder fan-out again when active reminders remain after their time, but not while
/// pages of the fan-out are still queued or running: re-paging then would remind their users twice.
@Suite struct ReconcilerReminderPagesTests {
    /// A stream whose reminder time has passed, with its fan-out marked done and three users still active.
    static func withPagedStream(_ body: (PostgresClient, TestDatabase) async throws -> Void) async throws {
        try await TestDatabase.withFresh(prefix: "recpages") { database, client in
            _ = try await Migrator().migrate(client)
            _ = try await client.withConnection { c in
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'Big', now() + interval '5 minutes')")
                try c.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, 3) AS i")
                try c.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 's1', 'u' || i FROM generate_series(1, 3) AS i")
                try c.execute("""
                    INSERT INTO countdown_stream_progress (stream_id, reminder_done_for)
                    SELECT id, planned_start_at FROM streams WHERE id = 's1'
                    """)
                try c.execute("DELETE FROM countdown_outbox")
            }
            try await body(client, database)
        }
    }

    static func reconcile(_ database: TestDatabase, _ queue: InMemoryDelayQueue) async throws -> Bool {
        try await reconcileReporting(database, queue).queued
    }

    /// Whether the reminder job was queued, and the run's report.
    static func reconcileReporting(_ database: TestDatabase, _ queue: InMemoryDelayQueue) async throws -> (queued: Bool, report: Reconciler.Report) {
        let reconciler = Reconciler(session: PostgresSession(configuration: database.configuration), queue: queue,
                                    planner: JobPlanner(settings: FlowSettings(startLeadSeconds: 3600, reminderLeadSeconds: 600)))
        let report = try await reconciler.run()
        let id = CountdownJob.streamJobID(.reminder, stream: "s1")
        return (try await queue.jobs(ids: [id])[id] != nil, report)
    }

    static func enqueuePage(_ queue: InMemoryDelayQueue) async throws {
        let page = CountdownJob.reminderPage(stream: "s1", after: "u1", through: nil)
        try await queue.enqueue([NewJob(id: page.id, kind: page.kind.rawValue, payload: page.payload, due: .now)])
    }

    @Test func withoutPagesLeftTheFanOutRunsAgain() async throws {
        try await Self.withPagedStream { _, database in
            let run = try await Self.reconcileReporting(database, InMemoryDelayQueue())
            #expect(run.queued)
            #expect(run.report.remindersLeftToPages.isEmpty)
        }
    }

    @Test func aWaitingOrRunningPageHoldsTheRunBack() async throws {
        try await Self.withPagedStream { _, database in
            let queue = InMemoryDelayQueue()
            try await Self.enqueuePage(queue)
            let besideWaiting = try await Self.reconcileReporting(database, queue)
            #expect(!besideWaiting.queued, "a waiting page")
            #expect(besideWaiting.report.remindersLeftToPages == ["s1"], "the report says why nothing was queued")
            let claimed = try await queue.claim(max: 1, lease: .seconds(60))
            #expect(claimed.jobs.count == 1)
            let besideRunning = try await Self.reconcileReporting(database, queue)
            #expect(!besideRunning.queued, "a running page")
            #expect(besideRunning.report.remindersLeftToPages == ["s1"])
        }
    }

    @Test func aDeadPageDoesNotHoldTheRunBack() async throws {
        try await Self.withPagedStream { _, database in
            let queue = InMemoryDelayQueue(policy: RetryPolicy(maxAttempts: 1))
            try await Self.enqueuePage(queue)
            let claimed = try await queue.claim(max: 1, lease: .seconds(60))
            let lease = try #require(claimed.jobs.first?.lease)
            let failed = try await queue.fail(lease, error: "test")
            #expect(failed == .deadLettered)
            let queued = try await Self.reconcile(database, queue)
            #expect(queued)
        }
    }

    @Test func aPageOfAnotherStreamDoesNotHoldTheRunBack() async throws {
        try await Self.withPagedStream { _, database in
            let queue = InMemoryDelayQueue()
            let page = CountdownJob.reminderPage(stream: "s10", after: "", through: nil)
            try await queue.enqueue([NewJob(id: page.id, kind: page.kind.rawValue, payload: page.payload, due: .now)])
            let queued = try await Self.reconcile(database, queue)
            #expect(queued)
        }
    }
}
