/// Where start-push outcomes are written: the ledger rows settled and the tokens the push service refused
/// cleared, together in one transaction. The settler's only seam to the database (tests put a fake behind it).
public protocol StartOutcomeSettling: Sendable {
    /// Returns the outcomes the ledger refused (`StartLedger.settle`): written nowhere, they are not retried.
    func settle(_ settlements: [StartLedger.Settlement], refused: [DeviceTokenQueries.Invalidation]) async throws -> [StartLedger.Refused]
}
