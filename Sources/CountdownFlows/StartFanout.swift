import BlockingIO
import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

/// Sends push-to-start pushes: to every eligible device of a stream (the T-60 job) or to one device or user of it
/// (backfill). The start ledger decides: one start per (stream, user, device), ever. Rows are claimed
/// (`sending`, by this worker) a page at a time before the push, and each outcome is written by the settler
/// within milliseconds of its answer, so a crashed worker's half-done fan-out is finished by the retry, not
/// repeated; only the pushes in flight at the crash can repeat.
///
/// Several streams are fanned out together (a burst of T-60 jobs, or a backfill's streams): every statement
/// covers all of them, so a batch costs the same dozen round trips as one stream. Each stream keeps its own
/// decision and outcome.
struct StartFanout: Sendable {
    let context: FlowContext

    typealias Plan = StartPlan

    func run(stream streamID: String, scope: FanoutScope) async throws -> HandlerOutcome {
        try await run(streams: [streamID], scope: scope)[streamID] ?? .skipped(reason: "stream_missing")
    }

    /// Fans out for `streams` (one scope for all); the outcome of each stream by id.
    func run(streams requested: [String], scope: FanoutScope) async throws -> [String: HandlerOutcome] {
        var seen = Set<String>()
        let streamIDs = requested.filter { seen.insert($0).inserted }
        let me = context.liveness.workerID
        let (owners, withRows) = try await context.claimOwners { try await context.starts.ledgerOwners(streamIDs, except: me) }
        let withoutRows = Set(streamIDs).subtracting(withRows)
        let (decided, plans): ([String: HandlerOutcome], [String: Plan])
        do {
            (decided, plans) = try await plan(streamIDs, scope: scope, owners: owners, withoutRows: withoutRows, racing: false)
        } catch let error as StoreError where error.code == .raced {
            // Another fan-out of one of these streams recorded a row between our read and our insert.
            context.logger.info("start ledger insert raced another fan-out; recording again with ON CONFLICT",
                                ["streams": .int(streamIDs.count), "first_stream": .string(streamIDs.first ?? "")])
            (decided, plans) = try await plan(streamIDs, scope: scope, owners: owners, withoutRows: [], racing: true)
        }
        await context.settler.hold(Plan.claimedRows(plans))
        for plan in plans.values {
            for target in plan.targets.values {
                if let skip = target.skip {
                    context.metrics.skip(kind: "start", reason: skip.rawValue, platform: target.candidate.platform)
                }
            }
        }
        guard !plans.isEmpty else { return decided }
        return try await send(plans, scope: scope, owners: owners).merging(decided) { sent, _ in sent }
    }

    /// In one transaction: reads the streams, decides which are due, records their targets in the ledger and claims
    /// the first page. `racing` writes the ledger rows with `ON CONFLICT` (after another fan-out raced this one);
    /// `withoutRows` are streams seen without ledger rows just before (their rows are not read again).
    private func plan(_ streamIDs: [String], scope: FanoutScope, owners: (dead: [String], alive: [String]),
                      withoutRows: Set<String>, racing: Bool) async throws -> ([String: HandlerOutcome], [String: Plan]) {
        let settings = context.settings
        let transport = context.transport
        let claim = StartLedger.InsertClaim(owner: context.liveness.workerID, seconds: context.claimSeconds, limit: context.startPageSize)
        return try await context.releasingClaims { noteClaims in
            try await context.starts.planStarts(streamIDs, scope: scope, claim: claim, owners: owners, withoutRows: withoutRows, racing: racing,
                decide: { $0.windowDecision(leadSeconds: settings.startLeadSeconds, notYet: "start window opens later") },
                skip: { StartEligibility.skipReason(for: $0, transport: transport, androidCountdown: settings.androidCountdownEnabled) },
                noteClaims: noteClaims)
        }
    }
}
