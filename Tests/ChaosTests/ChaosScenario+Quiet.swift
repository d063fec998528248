import Foundation
import Postgres
import TestSupport

extension ChaosScenario {
    /// Waits until nothing is open (`openWork`) and no push arrived for `settle` seconds; when a due second is set,
    /// not before half a second past it. On timeout the failure is a check (saying what was still open) and the
    /// answer false. `onPoll` runs on every poll (a scenario watching its workers).
    @discardableResult
    public func waitQuiet(timeout: Double, settle: Double = 1.5, onPoll: (() async throws -> Void)? = nil) async throws -> Bool {
        if let due { try await waitUntil(due + 0.5) }
        let deadline = Self.now + timeout
        var lastCount = -1
        var lastChange = Self.now
        var problems = ["not checked"]
        while Self.now < deadline {
            if let onPoll { try await onPoll() }
            try tally.refresh()
            let count = tally.starts.count + tally.reminders.count
            if count != lastCount {
                lastCount = count
                lastChange = Self.now
            }
            problems = try await openWork()
            if problems.isEmpty && Self.now - lastChange >= settle { return true }
            try await Task.sleep(for: .milliseconds(250))
        }
        check(false, "quiet within \(Int(timeout.rounded()))s (still: \(problems.joined(separator: ", ")))")
        return false
    }

    /// What is still going on (empty when quiet): outbox rows, open ledger rows, due streams whose start fan-out is
    /// not recorded as finished, due or leased jobs.
    public func openWork() async throws -> [String] {
        let row = try await system.query("""
            SELECT (SELECT count(*) FROM countdown_start_ledger WHERE stream_id LIKE $1 AND status IN ('pending', 'sending')) AS open_rows,
                   (SELECT count(*) FROM streams s LEFT JOIN countdown_stream_progress p ON p.stream_id = s.id
                    WHERE s.id LIKE $1 AND s.status = 'scheduled' AND s.planned_start_at - make_interval(secs => $2) <= now()
                      AND p.start_done_for IS DISTINCT FROM s.planned_start_at) AS unfinished
            """, [prefix + "%", Double(system.startLead)])[0]
        let openRows = try row.decode("open_rows", as: Int.self)
        let unfinished = try row.decode("unfinished", as: Int.self)
        let queue = try await system.queueCounts()
        var problems: [String] = []
        if try await system.outboxBacklog() > 0 { problems.append("outbox rows") }
        if openRows > 0 { problems.append("\(openRows) open ledger rows") }
        if unfinished > 0 { problems.append("\(unfinished) start fan-outs unfinished") }
        if queue.dueNow > 0 || queue.leased > 0 { problems.append("\(queue.dueNow) due and \(queue.leased) leased jobs") }
        return problems
    }
}
