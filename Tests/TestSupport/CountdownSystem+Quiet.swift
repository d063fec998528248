import Foundation

extension CountdownSystem {
    /// What is still going on for the streams whose id starts with `streamPrefix` (empty when nothing is): outbox
    /// rows, open start ledger rows, start fan-outs whose window opened but that have not finished, due or
    /// claimed jobs.
    public func openWork(streamPrefix: String) async throws -> [String] {
        let row = try await query("""
            SELECT (SELECT count(*) FROM countdown_start_ledger
                    WHERE starts_with(stream_id, $1::text) AND status IN ('pending', 'sending')) AS open_rows,
                   (SELECT count(*) FROM streams s LEFT JOIN countdown_stream_progress p ON p.stream_id = s.id
                    WHERE starts_with(s.id, $1::text) AND s.status = 'scheduled'
                      AND s.planned_start_at - make_interval(secs => $2::float8) <= now()
                      AND p.start_done_for IS DISTINCT FROM s.planned_start_at) AS unfinished
            """, [streamPrefix, startLead])[0]
        let openRows: Int = try row.decode("open_rows")
        let unfinished: Int = try row.decode("unfinished")
        let queue = try await queueStats()
        var problems: [String] = []
        if try await outboxBacklog() > 0 { problems.append("outbox rows") }
        if openRows > 0 { problems.append("\(openRows) open ledger rows") }
        if unfinished > 0 { problems.append("\(unfinished) start fan-outs unfinished") }
        if queue.claimableNow > 0 || queue.leased > 0 { problems.append("\(queue.claimableNow) due and \(queue.leased) leased jobs") }
        return problems
    }

    /// Waits until `openWork` finds nothing and no push reached `tally` for `settle` seconds. Returns what was
    /// still open when `timeout` seconds passed first (empty: quiet). `onPoll` runs at every poll (every 250 ms).
    public func waitQuiet(
        streamPrefix: String, tally: PushTally, timeout: Double, settle: Double = 1.5, onPoll: (() async throws -> Void)? = nil
    ) async throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var lastCount = -1
        var lastChange = Date()
        var problems = ["not checked"]
        while Date() < deadline {
            try await onPoll?()
            let count = try tally.refresh().tallied
            if count != lastCount { (lastCount, lastChange) = (count, Date()) }
            problems = try await openWork(streamPrefix: streamPrefix)
            if problems.isEmpty && Date().timeIntervalSince(lastChange) >= settle { return [] }
            try await Task.sleep(for: .milliseconds(250))
        }
        return problems
    }
}
