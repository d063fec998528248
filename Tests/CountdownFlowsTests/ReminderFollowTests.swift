import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import Testing

/// SPEC 12.2, reminders follow the move: a stream moved more than `REMINDER_LEAD_SECONDS` later after its reminder
/// went out gets it again before the new start, once (a retry sends nothing more); a smaller move sends nothing.
/// The reminder went out for an earlier planned start: its records are moved back in time (the lead is 600 s), as
/// the new start's reminder time has to be now for the job to send.
@Suite struct ReminderFollowTests {
    static func sentEarlier(by seconds: Int, _ db: PostgresClient) async throws {
        try await db.execute("""
            UPDATE countdown_stream_progress p SET reminder_done_for = s.planned_start_at - make_interval(secs => $1)
            FROM streams s WHERE s.id = p.stream_id
            """, [seconds])
        try await db.execute("""
            UPDATE countdown_reminder_claims c SET planned_start = s.planned_start_at - make_interval(secs => $1)
            FROM streams s WHERE s.id = c.stream_id
            """, [seconds])
    }

    /// Whether the planner, from what the relay and the reconciler read, queues the stream's reminder job.
    static func plansReminder(_ db: PostgresClient) async throws -> Bool {
        let (states, now) = try await db.withConnection { connection in
            (try StreamStateQueries.load(["s"], on: connection), try StreamStateQueries.now(on: connection))
        }
        let state = try #require(states["s"])
        return JobPlanner(settings: FlowSettings(reminderLeadSeconds: 600)).planStream(state, now: now)
            .contains { if case .enqueue(.reminder, _) = $0 { true } else { false } }
    }

    @Test func aMoveLaterThanTheLeadRemindsEveryDeviceOnceMore() async throws {
        try await ReminderPagesTests.withStream(users: 3) { handler, db, gateway, _ in
            _ = try await handler.handle(.reminder(stream: "s"))
            #expect(gateway.sent.withLock { $0.count } == 3)
            #expect(try await Self.plansReminder(db) == false)

            try await Self.sentEarlier(by: 700, db)
            #expect(try await Self.plansReminder(db), "moved 700 s later, more than the lead: the reminder job is planned")
            _ = try await handler.handle(.reminder(stream: "s"))
            let sent = gateway.sent.withLock { $0 }
            #expect(sent.count == 6 && Set(sent.suffix(3)) == Set(sent.prefix(3)), "each device once more: \(sent)")
            #expect(try await ReminderPagesTests.activeReminders(db) == 0)
            let statuses = try await db.query("SELECT DISTINCT status FROM stream_reminders").map { try $0.decode("status", as: String.self) }
            #expect(statuses == ["sent"], "the reminders stay sent")
            #expect(try await Self.plansReminder(db) == false, "done for the new start")

            // A retry of the job (a lost acknowledgement, a crash) sends nothing more for the same start.
            _ = try await handler.handle(.reminder(stream: "s"))
            #expect(gateway.sent.withLock { $0.count } == 6)
        }
    }

    @Test func aMoveWithinTheLeadRemindsNobodyAgain() async throws {
        try await ReminderPagesTests.withStream(users: 3) { handler, db, gateway, _ in
            _ = try await handler.handle(.reminder(stream: "s"))
            try await Self.sentEarlier(by: 500, db)
            #expect(try await Self.plansReminder(db) == false, "moved 500 s later, within the lead: nothing planned")
            _ = try await handler.handle(.reminder(stream: "s"))
            #expect(gateway.sent.withLock { $0.count } == 3, "and a job that runs anyway sends nothing")
        }
    }
}
