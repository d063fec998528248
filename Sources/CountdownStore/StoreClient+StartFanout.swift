import CountdownDomain
import Foundation

extension StoreClient: StartClaims {
    public func ledgerOwners(_ streams: [String], except: String?) async throws -> (owners: [String], streamsWithRows: Set<String>) {
        try await withConnection { try StartLedger.ledgerOwners(streams, except: except, on: $0) }
    }

    public func planStarts(_ streamIDs: [String], scope: FanoutScope, claim: StartLedger.InsertClaim, owners: (dead: [String], alive: [String]),
                           withoutRows: Set<String>, racing: Bool, decide: @escaping @Sendable (StreamSnapshotRow) -> HandlerOutcome?,
                           skip: @escaping @Sendable (DeviceCandidate) -> StartSkipReason?,
                           noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws
        -> (decided: [String: HandlerOutcome], plans: [String: StartPlan]) {
        try await transaction { connection -> (decided: [String: HandlerOutcome], plans: [String: StartPlan]) in
            var decided: [String: HandlerOutcome] = [:]
            var plans: [String: StartPlan] = [:]
            let loaded = try StreamSnapshotQueries.loadReadable(streamIDs, on: connection)
            var snapshots = loaded.rows
            let unreadable = loaded.unreadable
            try ViewerCountQuery.fill(&snapshots, on: connection)
            for id in streamIDs {
                if let error = unreadable[id] {
                    // One stream that cannot be read is skipped (and quarantined), never the whole batch.
                    try QuarantineQueries.record(.stream, key: id, foundBy: "start", reason: StoreError.reason(of: error), on: connection)
                    decided[id] = .skipped(reason: "unreadable_stream")
                    continue
                }
                guard let stream = snapshots[id] else {
                    decided[id] = .skipped(reason: "stream_missing")
                    continue
                }
                if let decision = decide(stream) { decided[id] = decision } else { plans[id] = StartPlan(stream: stream) }
            }
            // A stream whose row another writer holds waits for it alone; the rest of the batch goes out now.
            let unheld = try StreamQueries.lockUnheld(Array(plans.keys), on: connection)
            for id in plans.keys where !unheld.contains(id) {
                plans[id] = nil
                decided[id] = .reschedule(after: .seconds(1), reason: "stream_locked")
            }
            guard !plans.isEmpty else { return (decided, plans) }
            let active = streamIDs.filter { plans[$0] != nil }
            // An activity started more than 8 hours before the planned start would end before the stream: its row is
            // opened again for a new push-to-start, its sessions retired (SPEC 10.1, long reschedules). Only the
            // stream's own fan-out does it, so no reopened row waits for a job that will not come.
            if scope == .stream { try StartLedger.reopenOutlived(active, lifetimeSeconds: SessionUpdatePolicy.activityLifetimeSeconds, on: connection) }
            for (streamID, candidate) in try StartLedger.candidates(active, scope: scope, on: connection) {
                let target = StartLedger.Target(stream: streamID, candidate: candidate, skip: skip(candidate))
                plans[streamID]?.targets[target.key] = target
            }
            let recorded = try StartLedger.recordTargets(plans.values.flatMap(\.targets.values), scope: scope, claim: claim, racing: racing,
                                                              withoutRows: withoutRows, on: connection)
            for claim in recorded.claimed { plans[claim.key.stream]?.claimed.append(claim) }
            // Kept up to date as rows are claimed: if this transaction fails, they are given back.
            noteClaims(StartPlan.claimedRows(plans))
            // A first fan-out of its streams (the T-60 burst) wrote every row there is: all of a page claimed on insert,
            // nothing held by others.
            if !recorded.foundEarlierRows && scope == .stream {
                if recorded.claimed.count < claim.limit {
                    for id in plans.keys { plans[id]?.claimedEveryRow = true }
                }
                return (decided, plans)
            }
            // Rows recorded earlier and still pending, or held by a dead worker, fill the rest of the page.
            if recorded.claimed.count < claim.limit {
                for row in try StartLedger.claim(active, scope: scope, seconds: claim.seconds, owner: claim.owner, owners: owners,
                                                 limit: claim.limit - recorded.claimed.count, on: connection) {
                    plans[row.key.stream]?.claimed.append(row)
                }
            }
            noteClaims(StartPlan.claimedRows(plans))
            for (streamID, open) in try StartLedger.openClaims(active, owners: owners, on: connection) {
                guard var plan = plans[streamID] else { continue }
                plan.openByOthers = open - plan.claimed.count
                plans[streamID] = plan
            }
            return (decided, plans)
        }
    }

    public func claimStarts(_ streams: [String], scope: FanoutScope, seconds: Int, owner: String?, owners: (dead: [String], alive: [String]),
                            limit: Int, noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws -> [StartLedger.Claim] {
        try await transaction { connection in
            let claims = try StartLedger.claim(streams, scope: scope, seconds: seconds, owner: owner, owners: owners, limit: limit, on: connection)
            noteClaims(claims.map(\.key))
            return claims
        }
    }

    public func markStartsDone(_ planned: [String: Date], asking unknown: [String]) async throws -> Set<String> {
        try await transaction { connection -> Set<String> in
            let stillOpen = unknown.isEmpty ? [] : try StartLedger.streamsWithOpenRows(unknown, on: connection)
            let done = planned.filter { !stillOpen.contains($0.key) }
            try ProgressQueries.markStartsDone(done, on: connection)
            return Set(done.keys)
        }
    }
}
