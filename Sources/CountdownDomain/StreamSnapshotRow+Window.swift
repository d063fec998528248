import Foundation

extension StreamSnapshotRow {
    /// Why not to act now on a stream whose pushes go out `leadSeconds` before its planned start: skipped when
    /// it is no longer scheduled or has reached its start, rescheduled (`notYet`) when that time is still ahead
    /// by PostgreSQL's clock beyond the early tolerance; nil to go on.
    public func windowDecision(leadSeconds: Int, notYet: String) -> HandlerOutcome? {
        guard status == .scheduled else { return .skipped(reason: "stream_\(status.rawValue)") }
        let planned = snapshot.plannedStartAt
        guard now < planned else { return .skipped(reason: "too_late") }
        let due = planned.addingTimeInterval(-Double(leadSeconds))
        if now.addingTimeInterval(FlowSettings.earlyTolerance) < due {
            return .reschedule(to: due, now: now, reason: notYet)
        }
        return nil
    }
}
