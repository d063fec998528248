import CountdownDomain
import CountdownStore
import Foundation

extension ReminderFanout {
    /// `REMINDER_TRANSPORT=off`: the stream's reminder counts as done for this planned start (so the reconciler
    /// does not queue it again), nothing is sent, and the skip is counted.
    static func recordDone(_ streamID: String, planned: Date, context: FlowContext) async throws -> HandlerOutcome {
        try await markDone(streamID, planned: planned, context: context)
        context.metrics.skip(kind: "reminder", reason: "reminder_transport_off")
        return .skipped(reason: "reminder_transport_off")
    }

    /// Records the stream's reminder as done for `planned`.
    static func markDone(_ streamID: String, planned: Date, context: FlowContext) async throws {
        try await context.reminders.markRemindersDone(streamID, planned: planned)
    }
}
