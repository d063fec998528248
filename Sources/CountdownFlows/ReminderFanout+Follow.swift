import CountdownDomain
import CountdownStore
import Foundation

extension ReminderFanout {
    /// Whether the fan-out for `planned` follows a move (SPEC 12.2): the stream's reminder went out for a planned
    /// start more than `REMINDER_LEAD_SECONDS` earlier, or a fan-out following the move to `planned` began before.
    /// Then the sent reminders get it again too (they stay `sent`), and the page jobs read that from the stream's
    /// progress. The devices reached for a planned start at most the lead earlier are not sent to again.
    static func followsMove(_ streamID: String, planned: Date, context: FlowContext) async throws -> Bool {
        let progress = try await context.reminders.reminderProgress(streamID)
        if progress.followFor == planned { return true }
        guard JobPlanner(settings: context.settings).reminderFollows(progress.doneFor, to: planned) else { return false }
        try await context.reminders.markReminderFollow(streamID, planned: planned)
        return true
    }
}
