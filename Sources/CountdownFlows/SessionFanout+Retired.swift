import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension SessionFanout {
    /// End pushes for the sessions retired on `device` for `stream`. After a device takeover each dismisses the
    /// activity at once (`endedReason` is the stream's own when it has ended meanwhile, else `cancelled`: the
    /// activity no longer belongs to the phone's user); after a long move it says the stream moved, and to when, and
    /// stays for the dismissal window (SPEC 12.2). A retired session goes once its end push was accepted or
    /// its token is dead; other failures are retried with backoff until the dismissal window closes, then
    /// recorded as undeliverable. Nil when the device has no retired session of the stream.
    func endRetired(stream streamID: String, device: String) async throws -> HandlerOutcome? {
        let claimSeconds = context.claimSeconds
        let owner = context.liveness.workerID
        let (snapshot, retired, total) = try await context.sessions.claimRetired(stream: streamID, device: device, seconds: claimSeconds, owner: owner)
        if retired.isEmpty {
            return total > 0 ? .retry(after: .seconds(claimSeconds), reason: "retired_sessions_claimed_elsewhere") : nil
        }
        guard let stream = snapshot else {
            // The stream row is gone: no payload can be built, and there is no activity left worth a retry.
            _ = try await context.sessions.finishRetired(stream: streamID, device: device, tokens: retired.map(\.activityToken))
            return .skipped(reason: "stream_missing")
        }
        let reason = stream.status.isTerminal ? EndReason(rawValue: stream.status.rawValue) ?? .cancelled : .cancelled
        let (pushes, addressed, unreachable) = context.pushes(to: retired, kind: "end", platform: "ios", what: "retired session payload",
                                                              device: \.device, locales: { ($0.locale, $0.userLocale) }) { session, language in
            guard let fcm = context.liveActivityFCM(session.fcmToken) else { return nil }
            let role = session.user.flatMap { stream.roles[$0] }
            let payload: LiveActivityPayload
            if session.reason == RetiredSessionQueries.activityLifetime {
                // The long move (SPEC 12.2): the activity says the stream moved, and to when, and stays to be seen; if
                // the stream has ended meanwhile, it ends for that reason as any activity does.
                payload = stream.status.isTerminal
                    ? try context.payloads.end(stream.snapshot, reason: reason, role: role, language: language, now: stream.now,
                                               viewerCount: stream.viewerCount)
                    : try context.payloads.moved(stream.snapshot, role: role, language: language,
                                                 timeZone: session.timeZone.flatMap(TimeZone.init(identifier:)), now: stream.now,
                                                 viewerCount: stream.viewerCount)
            } else {
                payload = try context.payloads.end(stream.snapshot, reason: reason, role: role, language: language, now: stream.now,
                                                   viewerCount: stream.viewerCount, dismissNow: true)
            }
            return .liveActivity(payload, fcmToken: fcm, activityToken: session.activityToken)
        }
        var failures = unreachable.map {
            RetiredSessionQueries.Failure(activityToken: $0.activityToken,
                                          reason: context.liveActivityFCM($0.fcmToken) == nil ? "no_fcm_token" : "payload_error")
        }
        let deliveries = await context.push.sendAll(pushes, kind: .end)
        var finished: [String] = []
        var refusedFCM: [DeviceTokenQueries.Invalidation] = []
        var recovery = RecoveryWait()
        for (session, delivery) in zip(addressed, deliveries) {
            recovery.note(delivery)
            switch delivery {
            case .accepted:
                finished.append(session.activityToken)
            case .tokenRefused(let token, let why):
                if token == .runtime {
                    finished.append(session.activityToken)
                } else {
                    refusedFCM.append(DeviceTokenQueries.Invalidation(device: device, token: token, value: session.fcmToken ?? "", reason: why, stream: streamID))
                    failures.append(.init(activityToken: session.activityToken, reason: "fcm_token_refused"))
                }
            case .rejected:
                failures.append(.init(activityToken: session.activityToken, reason: "rejected"))
            case .retry:
                failures.append(.init(activityToken: session.activityToken, reason: "retry"))
            case .configurationError:
                failures.append(.init(activityToken: session.activityToken, reason: "config"))
            }
        }
        let ledger = try await context.sessions.settleRetired(stream: streamID, device: device, refused: refusedFCM, done: finished, failed: failures,
                                                              windowSeconds: EndDeliveryQueries.window(context.settings))
        if let retry = await retryEnds(recovery, ledger: ledger, job: .sessionEnd(stream: streamID, device: device), platform: "ios",
                                       what: "end push of a retired session", ["stream": .string(streamID), "device": .string(device)],
                                       reason: "end_push_retry") { return retry }
        let why = Set(retired.map(\.reason)).sorted().joined(separator: ", ")
        return .done(detail: "ended \(finished.count) of \(retired.count) retired sessions (\(why), \(reason.rawValue))")
    }
}
