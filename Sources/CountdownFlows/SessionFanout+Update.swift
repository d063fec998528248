import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension SessionFanout {
    /// Most rounds one update job sends: a round sends the then-current start to the sessions not showing it, and a
    /// start that moved while a round was out makes another.
    static let updateRounds = 5
    /// How soon a job looks again when another run of the stream's update fan-out holds it, or a push-to-start whose
    /// answer is not yet recorded leaves a session's state unknown.
    static let updateRecheck: Duration = .milliseconds(500)

    /// Update pushes with the current state to the sessions of a still-scheduled stream that do not show it
    /// (SPEC 10.1): after a reschedule, every session that accepted an older start; after a late registration, a
    /// session whose activity was started before the planned start last moved. What each session accepted is
    /// recorded (`SessionDeliveryQueries`), so a retry resends only to the sessions whose update was not accepted.
    /// Newest state only: one run per stream at a time (a claim on its progress row, kept alive while the run is
    /// out), the stream, its sessions and their records read in one snapshot, and a start that moved while a round
    /// was out is sent in another round (the last push each session accepts carries the current start).
    /// `apns-priority` follows `UpdatePriority` against what the session shows, its push-to-start included
    /// (SPEC 12.2); `apns-expiration` is the new planned start.
    func update(stream streamID: String) async throws -> HandlerOutcome {
        let claim = UUID().uuidString
        let seconds = context.claimSeconds
        let owner = context.liveness.workerID
        let dead = try await context.claimOwners { try await context.sessions.updateClaimOwners(streamID, except: owner) }.dead
        let claimed = try await context.sessions.claimUpdate(streamID, claim: claim, seconds: seconds, owner: owner, deadOwners: dead)
        switch claimed {
        case .streamMissing: return .skipped(reason: "stream_missing")
        case .heldElsewhere: return .reschedule(after: Self.updateRecheck, reason: "update_running_elsewhere")
        case .claimed: break
        }
        let outcome: HandlerOutcome
        do {
            outcome = try await updateClaimKeeper(streamID, claim: claim, seconds: seconds).keeping { try await sendUpdates(streamID, lost: $0) }
        } catch {
            try? await context.sessions.releaseUpdate(streamID, claim: claim)
            throw error
        }
        try await context.sessions.releaseUpdate(streamID, claim: claim)
        return outcome
    }

    /// Keeps the stream's update claim `claim` alive while the rounds of a claimed update fan-out run (`keeping`): a
    /// fan-out that outlasts its claim (a large stream, a slow gateway, a loaded host) would otherwise let another run
    /// of the stream's job (queued again by the relay or the reconciler meanwhile) take the claim over and send again
    /// to every session this run had not recorded yet. Stops once the claim is found no longer this run's, and so
    /// does the run after its round (`sendUpdates`).
    private func updateClaimKeeper(_ streamID: String, claim: String, seconds: Int) -> ClaimKeeper {
        ClaimKeeper(name: "update_claim", seconds: seconds) { [context] in
            do {
                if try await context.sessions.extendUpdate(streamID, claim: claim, seconds: seconds) { return true }
                context.logger.warn("an update fan-out lost its claim on the stream", ["stream": .string(streamID)])
                return false
            } catch {
                if !Task.isCancelled {
                    context.logger.warn("could not extend an update fan-out's claim", ["stream": .string(streamID), "error": .error(error)])
                }
                return true
            }
        }
    }

    /// The rounds of one claimed update fan-out. Once its claim is `lost` (taken over by another run of the stream's
    /// job), no other round starts: what this run sent is recorded, and the run holding the claim sends the rest.
    private func sendUpdates(_ streamID: String, lost: @Sendable () -> Bool) async throws -> HandlerOutcome {
        var updated = 0
        var needed = 0
        for _ in 0..<Self.updateRounds {
            guard !lost() else { return .skipped(reason: "update_claim_lost") }
            // The stream, its sessions and what they show, from one snapshot (so the planned start and its last move agree).
            guard let (stream, sessions, known) = try await context.sessions.sessionsToUpdate(streamID) else { return .skipped(reason: "stream_missing") }
            guard stream.status == .scheduled else { return .skipped(reason: "stream_\(stream.status.rawValue)") }
            let planned = stream.snapshot.plannedStartAt
            var due: [Session] = []
            var outlived: [String] = []
            var awaiting = 0
            for session in sessions {
                switch SessionUpdatePolicy.need(planned: planned, shown: known.shown(session.recordKey), startSentAt: known.startSentAt[session.device],
                                                startInFlight: known.startInFlight.contains(session.device)) {
                case .update: due.append(session)
                case .awaitingStart: awaiting += 1
                case .outlived: outlived.append(session.device)
                case .nothing: break
                }
            }
            if !outlived.isEmpty {
                // Ended at once with immediate dismissal, and the stream's outlived ledger rows opened again (the next
                // generation) in the same transaction: the stream's start job sends those devices a new start at its
                // T-lead, also when the stream moves back before then (retiring alone left the rows `sent`, and a stream
                // moved back got no start). A session registered after its row was reopened is retired here too.
                try await context.sessions.retireOutlived(streamID, devices: outlived)
            }
            needed += due.count
            if !due.isEmpty {
                let round = try await sendRound(due, stream: stream, planned: planned, known: known)
                updated += round.accepted
                if let retry = round.retry { return retry }
            }
            let current = try await context.sessions.plannedStart(streamID)
            guard current == planned else { continue }
            if awaiting > 0 { return .reschedule(after: Self.updateRecheck, reason: "start_in_flight") }
            try await context.sessions.markUpdateDone(streamID, planned: planned)
            if needed == 0 {
                return .done(detail: sessions.isEmpty ? "no sessions to update" : "all \(sessions.count) sessions show the current start")
            }
            return .done(detail: "updated \(updated) of \(needed) sessions not showing the current start (\(sessions.count) in all)")
        }
        return .retry(after: nil, reason: "planned_start_moving")
    }

    /// Sends `planned` to `due` and records what each accepted; `retry` when some must be sent again later.
    private func sendRound(_ due: [Session], stream: StreamSnapshotRow, planned: Date, known: SessionDeliveryQueries.Knowledge) async throws
        -> (accepted: Int, retry: HandlerOutcome?) {
        let streamID = stream.snapshot.id
        let (pushes, addressed, _) = build(due, kind: "update") { session, language, role in
            try context.payloads.update(stream.snapshot, role: role, language: language, now: stream.now, viewerCount: stream.viewerCount,
                                        priority: UpdatePriority.of(newStart: planned, shown: known.shown(session.recordKey), now: stream.now))
        } roles: { stream.roles[$0] }
        var accepted = 0
        var unrecorded: [Session] = []
        var refused: [DeviceTokenQueries.Invalidation] = []
        var retry = PushRetry()
        // Each batch's accepted updates are recorded as its answers arrive: a crash repeats only what is out.
        await context.push.sendEach(pushes, kind: .update, window: context.push.batchesOut) { start, deliveries, _ in
            var batch: [Session] = []
            for (session, delivery) in zip(addressed[start..<start + deliveries.count], deliveries) {
                retry.note(delivery)
                switch delivery {
                case .accepted:
                    batch.append(session)
                case .tokenRefused(let token, let reason):
                    // A refused runtime token means the activity is gone: its session goes too (recorded, restorable).
                    refused.append(Self.invalidation(session, token: token, reason: reason, stream: streamID))
                case .rejected, .retry, .configurationError:
                    break
                }
            }
            accepted += batch.count
            let written = await context.recordArrived(batch, what: "update", stream: streamID) {
                try await context.sessions.updatesAccepted(streamID, accepted: $0, shown: planned)
            }
            if !written { unrecorded += batch }
        }
        try await context.sessions.settleUpdates(streamID, refused: refused, accepted: unrecorded, shown: planned)
        return (accepted, retry.outcome())
    }
}
