import Foundation
import Testing
@testable import CountdownDomain

/// REMINDER_TRANSPORT=off: the planner plans no reminder job, however many reminders are active.
@Suite struct JobPlannerRemindersOffTests {
    @Test func noReminderJobsWhenRemindersAreOff() {
        var settings = FlowSettings()
        settings.remindersEnabled = false
        let planner = JobPlanner(settings: settings)
        let now = Date(timeIntervalSince1970: 1_776_700_000)
        let state = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(7200), hasActiveReminders: true)
        let operations = planner.planStream(state, now: now)
        #expect(!operations.contains { if case .enqueue(.reminder, _) = $0 { true } else { false } })
        #expect(operations.contains { if case .enqueue(.start, _) = $0 { true } else { false } })
        #expect(planner.planReminder(stream: state, now: now).isEmpty)
        #expect(!JobPlanner(settings: FlowSettings()).planReminder(stream: state, now: now).isEmpty)
    }
}
