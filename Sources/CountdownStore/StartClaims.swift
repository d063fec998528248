import CountdownDomain
import Foundation

/// The start fan-out's seam to the database (the start ledger and its progress): each call is one statement or
/// one transaction, as the fan-out ran it. `noteClaims` hears every ledger row a transaction claims before it
/// commits, so the caller can give them back when the commit's fate is unknown.
public protocol StartClaims: Sendable {
    /// The workers other than `except` holding rows of `streams`, and which of `streams` have ledger rows at all.
    func ledgerOwners(_ streams: [String], except: String?) async throws -> (owners: [String], streamsWithRows: Set<String>)

    /// In one transaction: reads `streams`, decides which are due (`decide` answers for the rest), records their
    /// targets in the ledger (`skip` tells an ineligible device) and claims the first page. `racing` writes with
    /// `ON CONFLICT` (after another fan-out raced this one, `StoreError(.raced)`); `withoutRows` are streams seen
    /// without ledger rows just before.
    func planStarts(_ streams: [String], scope: FanoutScope, claim: StartLedger.InsertClaim, owners: (dead: [String], alive: [String]),
                    withoutRows: Set<String>, racing: Bool, decide: @escaping @Sendable (StreamSnapshotRow) -> HandlerOutcome?,
                    skip: @escaping @Sendable (DeviceCandidate) -> StartSkipReason?,
                    noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws
        -> (decided: [String: HandlerOutcome], plans: [String: StartPlan])

    /// Claims up to `limit` more pending rows of `streams` for `owner` (`StartLedger.claim`).
    func claimStarts(_ streams: [String], scope: FanoutScope, seconds: Int, owner: String?, owners: (dead: [String], alive: [String]),
                     limit: Int, noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws -> [StartLedger.Claim]

    /// In one transaction: records the streams of `planned` with no open ledger row as started for their planned
    /// start, asking only about `unknown`; returns them.
    func markStartsDone(_ planned: [String: Date], asking unknown: [String]) async throws -> Set<String>
}
