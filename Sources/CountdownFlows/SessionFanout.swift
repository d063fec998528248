import BlockingIO
import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

/// Pushes to runtime sessions: the end push when a stream ended (all sessions, or one late session), and the
/// update push after a reschedule or a late registration (`SessionFanout+Update`). A session is deleted once its end
/// push is accepted or its token is dead.
struct SessionFanout: Sendable {
    let context: FlowContext

    typealias Session = SessionQueries.Session

    /// End pushes for every session of an ended stream (or only `device`'s).
    func end(stream streamID: String, device: String? = nil) async throws -> HandlerOutcome {
        let me = context.liveness.workerID
        let dead = try await context.claimOwners { try await context.sessions.endClaimOwners(streamID, except: me) }.dead
        let loaded = try await context.sessions.sessions(of: streamID, device: device, claimingFor: context.claimSeconds, owner: me, deadOwners: dead)
        guard let (stream, othersClaimed, heldFor, sessions) = loaded else { return .skipped(reason: "stream_missing") }
        guard stream.status.isTerminal, let reason = EndReason(rawValue: stream.status.rawValue) else {
            return .skipped(reason: "stream_not_ended")
        }
        if sessions.isEmpty {
            return othersClaimed > 0 ? .retry(after: Self.claimedElsewhereWait(heldFor: heldFor, claimSeconds: context.claimSeconds),
                                              reason: "sessions_claimed_elsewhere")
                : .done(detail: "no sessions to end")
        }
        let (pushes, addressed, unreachable) = build(sessions) { session, language, role in
            try context.payloads.end(stream.snapshot, reason: reason, role: role, language: language, now: stream.now,
                                     viewerCount: stream.viewerCount)
        } roles: { stream.roles[$0] }
        context.broadcast?.metrics.endRequests(path: "token", count: pushes.count)
        let (deliveries, deletedEarly) = await sendEnds(pushes, to: addressed, stream: streamID)
        // Nothing is dropped silently: a session goes only once its end push was accepted or its runtime token is
        // dead; every other failure is retried until the dismissal window closes (EndDeliveryQueries).
        var delivered: [Session] = []
        var refused: [DeviceTokenQueries.Invalidation] = []
        var deadTokens: [Session] = []
        var failures = unreachable.map { session in
            EndDeliveryQueries.Failure(device: session.device, activity: session.activity, token: session.activityToken,
                                      reason: context.liveActivityFCM(session.fcmToken) == nil ? "no_fcm_token" : "payload_error")
        }
        // Devices refused with a `Retry-After`: no end job sends to them before it has passed (SPEC 10.1).
        var recovery = RecoveryWait()
        for (session, delivery) in zip(addressed, deliveries) {
            recovery.note(delivery, holding: (session.device, nil))
            func failed(_ reason: String) {
                failures.append(EndDeliveryQueries.Failure(device: session.device, activity: session.activity, token: session.activityToken,
                                                          reason: reason))
            }
            switch delivery {
            case .accepted:
                delivered.append(session)
            case .tokenRefused(let token, let reason):
                // A refused runtime token ends the session through DeviceTokenQueries (recorded, restorable).
                refused.append(Self.invalidation(session, token: token, reason: reason, stream: streamID))
                if token == .runtime { deadTokens.append(session) } else { failed("fcm_token_refused") }
            case .rejected:
                failed("rejected")
            case .retry:
                failed("retry")
            case .configurationError:
                failed("config")
            }
        }
        let done = delivered + deadTokens
        let claimed = sessions.map(\.device)
        let (deletedLate, ledger) = try await context.sessions.settleEnds(streamID, refused: refused, finished: delivered, done: done, failed: failures,
                                                                          windowSeconds: EndDeliveryQueries.window(context.settings), claimed: claimed,
                                                                          holding: recovery.holds)
        let deleted = deletedEarly + deletedLate
        let job: CountdownJob = device.map { .sessionEnd(stream: streamID, device: $0) } ?? .end(stream: streamID)
        if let retry = await retryEnds(recovery, ledger: ledger, job: job, platform: "ios", what: "end push", ["stream": .string(streamID)],
                                       reason: "end_push_retry") { return retry }
        // Sessions held by a `Retry-After` are still to end, and no worker owns them: look again when the hold ends.
        if heldFor != nil { return .retry(after: Self.claimedElsewhereWait(heldFor: heldFor, claimSeconds: context.claimSeconds), reason: "sessions_held") }
        return .done(detail: "ended \(deleted) of \(sessions.count) sessions (\(reason.rawValue))"
                     + (ledger.undeliverable.isEmpty ? "" : ", \(ledger.undeliverable.count) undeliverable"))
    }

    static func invalidation(_ session: Session, token: TargetToken, reason: String, stream: String) -> DeviceTokenQueries.Invalidation {
        DeviceTokenQueries.Invalidation(device: session.device, token: token, value: token == .runtime ? session.activityToken : session.fcmToken ?? "",
                                  reason: reason, stream: stream)
    }

    /// The pushes to `sessions`; a session without an FCM token (FCM transport) is counted as skipped for `kind`.
    func build(
        _ sessions: [Session], kind: String = "end", payload: (Session, PayloadLanguage, ParticipantRole?) throws -> LiveActivityPayload,
        roles: (String) -> ParticipantRole?
    ) -> (pushes: [OutgoingPush], addressed: [Session], unreachable: [Session]) {
        context.pushes(to: sessions, kind: kind, platform: "ios", what: "session payload", device: \.device,
                       locales: { ($0.locale, $0.userLocale) }) { session, language in
            guard let fcm = context.liveActivityFCM(session.fcmToken) else { return nil }
            return .liveActivity(try payload(session, language, session.user.flatMap(roles)), fcmToken: fcm, activityToken: session.activityToken)
        }
    }
}
