import Foundation

/// The seam of the operator's reports and actions (`CountdownMaintenance`: what `countdown-admin` and the console
/// share): each call is one statement, one transaction, or (a report) several statements on one connection.
public protocol OperatorRecords: Sendable {
    func quarantineEntries() async throws -> [QuarantineQueries.Entry]
    /// Drops the entries of `keys` (nil: every entry); how many went.
    func dropQuarantined(keys: [String]?) async throws -> Int
    /// Records `key` in the quarantine (again), with `reason`.
    func quarantine(_ kind: QuarantineQueries.Kind, key: String, foundBy: String, reason: String) async throws
    /// In one transaction: a quarantined stream that still exists goes back through the outbox (planned again as
    /// rescheduled); either way it leaves the quarantine. False when the stream is gone.
    func requeueQuarantined(stream: String) async throws -> Bool

    func tokenInvalidations(since: TimeCutoff, reason: String?, limit: Int) async throws -> [TokenInvalidation]
    /// How many cleared tokens a restore would put back now (`TokenInvalidationQueries.restorable`).
    func restorableTokens(since: TimeCutoff, reason: String?) async throws -> Int
    /// In one transaction (`TokenInvalidationQueries.restore`); nothing when more than `limit` would go back.
    func restoreTokens(since: TimeCutoff, reason: String?, limit: Int?) async throws -> TokenInvalidationQueries.RestoreReport

    /// On one connection: the fleet's figures of the streams near their start, and the kinds paused.
    func fleetCounts(aheadSeconds: Int) async throws -> (counts: FleetStatsQueries.Counts, paused: [PauseQueries.Entry])
    /// On one connection: what the report of `stream` reads (nil when the stream does not exist).
    func streamReportRows(_ stream: String) async throws -> StreamReportQueries.Rows?
}
