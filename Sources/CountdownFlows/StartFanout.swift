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

    /// A target's user and device within its stream.
    struct TargetKey: Hashable, Sendable {
        var user: String
        var device: String
    }

    /// One stream's part of a fan-out.
    struct Plan: Sendable {
        var stream: StreamSnapshotRow
        /// Every device considered, as its ledger row is recorded (its token hash goes with its push's outcome too).
        var targets: [TargetKey: StartLedgerStore.Target] = [:]
        var claimed: [(user: String, device: String)] = []
        var openByOthers = 0
        /// Every row of the stream was written by this fan-out and claimed in its first page: once their outcomes
        /// are written, only a retry outcome can leave one open.
        var claimedEveryRow = false

        static func key(_ user: String, _ device: String) -> TargetKey { TargetKey(user: user, device: device) }
    }

    func run(stream streamID: String, scope: FanoutScope) async throws -> HandlerOutcome {
        try await run(streams: [streamID], scope: scope)[streamID] ?? .skipped(reason: "stream_missing")
    }

    /// Fans out for `streams` (one scope for all); the outcome of each stream by id.
    func run(streams requested: [String], scope: FanoutScope) async throws -> [String: HandlerOutcome] {
        var seen = Set<String>()
        let streamIDs = requested.filter { seen.insert($0).inserted }
        let me = context.liveness.workerID
        let (owners, withRows) = try await context.claimOwners { connection in
            let read = try StartLedgerStore.ledgerOwners(streamIDs, except: me, on: connection)
            return (read.owners, read.streamsWithRows)
        }
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
        await context.settler.hold(plans.flatMap { streamID, plan in
            plan.claimed.map { ClaimStore.Row(stream: streamID, user: $0.user, device: $0.device) }
        })
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
        let claimSeconds = context.claimSeconds
        let me = context.liveness.workerID
        let pageSize = context.startPageSize
        let claimedHere = Locked([ClaimStore.Row]())
        return try await context.releasingClaims(claimedHere) { connection -> ([String: HandlerOutcome], [String: Plan]) in
            var decided: [String: HandlerOutcome] = [:]
            var plans: [String: Plan] = [:]
            let loaded = try StreamSnapshotStore.loadReadable(streamIDs, on: connection)
            var snapshots = loaded.rows
            let unreadable = loaded.unreadable
            try ViewerCountQuery.fill(&snapshots, on: connection)
            for id in streamIDs {
                if let error = unreadable[id] {
                    // One stream that cannot be read is skipped (and quarantined), never the whole batch.
                    try QuarantineStore.record(.stream, key: id, foundBy: "start", reason: RowFault.reason(of: error) ?? "\(error)", on: connection)
                    decided[id] = .skipped(reason: "unreadable_stream")
                    continue
                }
                guard let stream = snapshots[id] else {
                    decided[id] = .skipped(reason: "stream_missing")
                    continue
                }
                if let decision = stream.windowDecision(leadSeconds: settings.startLeadSeconds, notYet: "start window opens later") { decided[id] = decision } else { plans[id] = Plan(stream: stream) }
            }
            // A stream whose row another writer holds waits for it alone; the rest of the batch goes out now.
            let unheld = try StreamStore.lockUnheld(Array(plans.keys), on: connection)
            for id in plans.keys where !unheld.contains(id) {
                plans[id] = nil
                decided[id] = .reschedule(after: .seconds(1), reason: "stream_locked")
            }
            guard !plans.isEmpty else { return (decided, plans) }
            let active = streamIDs.filter { plans[$0] != nil }
            // An activity started more than 8 hours before the planned start would end before the stream: its row is
            // opened again for a new push-to-start, its sessions retired (SPEC 10.1, long reschedules). Only the
            // stream's own fan-out does it, so no reopened row waits for a job that will not come.
            if scope == .stream { try ActivityLifetimeStore.reopenOutlived(active, lifetimeSeconds: SessionUpdatePolicy.activityLifetimeSeconds, on: connection) }
            for (streamID, candidate) in try StartLedgerStore.candidates(active, scope: scope, on: connection) {
                plans[streamID]?.targets[Plan.key(candidate.userID, candidate.deviceID)] = StartLedgerStore.Target(
                    stream: streamID, candidate: candidate,
                    skip: StartEligibility.skipReason(for: candidate, transport: transport, androidCountdown: settings.androidCountdownEnabled))
            }
            let recorded = try StartLedgerStore.recordTargets(plans.values.flatMap(\.targets.values), scope: scope, claim: .init(owner: me, seconds: claimSeconds, limit: pageSize), racing: racing,
               withoutRows: withoutRows, on: connection)
            for row in recorded.claimed { plans[row.stream]?.claimed.append((row.user, row.device)) }
            // A first fan-out of its streams (the T-60 burst) wrote every row there is: all of a page claimed on insert,
            // nothing held by others.
            // Kept up to date as rows are claimed: if this transaction fails, they are given back.
            func noteClaims() {
                claimedHere.withLock { claimed in
                    claimed = plans.flatMap { streamID, plan in plan.claimed.map { ClaimStore.Row(stream: streamID, user: $0.user, device: $0.device) } }
                }
            }
            noteClaims()
            if !recorded.foundEarlierRows && scope == .stream {
                if recorded.claimed.count < pageSize {
                    for id in plans.keys { plans[id]?.claimedEveryRow = true }
                }
                return (decided, plans)
            }
            // Rows recorded earlier and still pending, or held by a dead worker, fill the rest of the page.
            if recorded.claimed.count < pageSize {
                for row in try StartLedgerStore.claim(active, scope: scope, seconds: claimSeconds, owner: me, owners: owners,
                                                      limit: pageSize - recorded.claimed.count, on: connection) {
                    plans[row.stream]?.claimed.append((row.user, row.device))
                }
            }
            noteClaims()
            for (streamID, open) in try StartLedgerStore.openClaims(active, owners: owners, on: connection) {
                guard var plan = plans[streamID] else { continue }
                plan.openByOthers = open - plan.claimed.count
                plans[streamID] = plan
            }
            return (decided, plans)
        }
    }
}
