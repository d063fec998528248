import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension SessionFanout {
    /// Update pushes with the current state to the sessions of a still-scheduled stream that do not show it
    /// (SPEC 10.1): after a reschedule, every session that accepted an older start; after a late registration, a
    /// session whose activity was started before the planned start last moved. What each session accepted is
    /// recorded (`SessionDeliveryStore`), so a retry resends only to the sessions whose update was not accepted, and a
    /// newer reschedule supersedes a pending update (the job always sends the start current when it runs).
    /// `apns-priority` follows `SessionUpdatePolicy`; `apns-expiration` is the new planned start.
    func update(stream streamID: String) async throws -> HandlerOutcome {
        let loaded = try await load(streamID, device: nil, claimingFor: nil)
        guard let (stream, sessions) = loaded else { return .skipped(reason: "stream_missing") }
        guard stream.status == .scheduled else { return .skipped(reason: "stream_\(stream.status.rawValue)") }
        let planned = stream.snapshot.snapshot.plannedStartAt
        let known = try await context.database.withConnection { try SessionDeliveryStore.knowledge(streamID, channel: .liveActivity, on: $0) }
        let due = sessions.filter { session in
            SessionUpdatePolicy.needsUpdate(planned: planned, shown: known.records[session.device]?.shownStartAt,
                                            startSentAt: known.startSentAt[session.device], plannedChangedAt: known.plannedChangedAt)
        }
        guard !due.isEmpty else {
            try await context.database.withConnection { try ProgressStore.markUpdateDone(streamID, planned: planned, on: $0) }
            return .done(detail: sessions.isEmpty ? "no sessions to update" : "all \(sessions.count) sessions show the current start")
        }
        let (pushes, addressed, _) = build(due) { session, language, role in
            try context.payloads.update(stream.snapshot.snapshot, role: role, language: language, now: stream.now, viewerCount: stream.snapshot.viewerCount,
                                        priority: SessionUpdatePolicy.priority(planned: planned, shown: known.records[session.device]?.shownStartAt,
                                                                               now: stream.now))
        } roles: { stream.roles[$0] }
        let deliveries = await context.push.sendAll(pushes, kind: .update)
        var accepted: [(device: String, token: String)] = []
        var refused: [DeviceTokenStore.Invalidation] = []
        var retry = false
        var retryAfter: Duration?
        for (session, delivery) in zip(addressed, deliveries) {
            switch delivery {
            case .accepted:
                accepted.append((session.device, session.activityToken))
            case .tokenRefused(let token, let reason):
                // A refused runtime token means the activity is gone: its session goes too (recorded, restorable).
                refused.append(Self.invalidation(session, token: token, reason: reason, stream: streamID))
            case .rejected:
                break
            case .retry(let after, _):
                retry = true
                if let after { retryAfter = max(retryAfter ?? .zero, after) }
            case .configurationError:
                retry = true
                retryAfter = max(retryAfter ?? .zero, .seconds(60))
            }
        }
        let acceptedNow = accepted
        let refusedTokens = refused
        try await context.database.transaction { connection in
            try DeviceTokenStore.clear(refusedTokens, on: connection)
            try SessionDeliveryStore.recordAccepted(streamID, channel: .liveActivity, accepted: acceptedNow, shown: planned, on: connection)
        }
        if retry { return .retry(after: retryAfter, reason: "push_retry") }
        try await context.database.withConnection { try ProgressStore.markUpdateDone(streamID, planned: planned, on: $0) }
        return .done(detail: "updated \(accepted.count) of \(due.count) sessions not showing the current start (\(sessions.count) in all)")
    }
}
