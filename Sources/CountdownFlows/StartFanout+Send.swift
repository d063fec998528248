import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension StartFanout {
    private struct Sent {
        var stream: String
        var user: String
        var device: String
        var pts: String
        var fcm: String
    }

    /// Sends the claimed rows of every plan at once, settles them in one transaction, and decides each stream.
    func send(_ plans: [String: Plan], scope: FanoutScope) async throws -> [String: HandlerOutcome] {
        var pushes: [OutgoingPush] = []
        var sent: [Sent] = []
        var settlements: [LedgerSettlement] = []
        var built: [String: LiveActivityPayload] = [:]  // one payload per stream, role and language, shared by its devices
        for (streamID, plan) in plans {
            for (user, device) in plan.claimed {
                guard let target = plan.targets[Plan.key(user, device)], target.skip == nil, let pts = target.candidate.pushToStartToken else {
                    settlements.append(LedgerSettlement(stream: streamID, user: user, device: device, status: "skipped", reason: "no_longer_eligible"))
                    continue
                }
                let language = PayloadLanguage.resolve(deviceLocale: target.candidate.locale, userLocale: target.candidate.userLocale)
                let role = ParticipantRole(rawValue: target.candidate.role) ?? .guest
                do {
                    let key = streamID + "\u{0}" + role.rawValue + "\u{0}" + language.rawValue
                    let payload = try built[key] ?? context.payloads.start(plan.stream.snapshot, role: role, language: language, now: plan.stream.now,
                                                                             viewerCount: plan.stream.viewerCount)
                    built[key] = payload
                    let fcm = target.candidate.fcmToken ?? ""
                    pushes.append(.liveActivity(payload, fcmToken: fcm, activityToken: pts))
                    sent.append(Sent(stream: streamID, user: user, device: device, pts: pts, fcm: fcm))
                } catch {
                    settlements.append(LedgerSettlement(stream: streamID, user: user, device: device, status: "failed", reason: "payload_error"))
                    context.logger.error("start payload could not be built", ["stream": .string(streamID), "error": .error(error)])
                }
            }
        }
        let deliveries = await context.push.sendAll(pushes, kind: .start)
        var retryAfter: [String: Duration?] = [:]  // streams that need a retry, with the longest Retry-After asked for
        var refused: [DeviceTokenStore.Invalidation] = []
        for (key, delivery) in zip(sent, deliveries) {
            let tokens = (fcm: key.fcm, pts: key.pts)
            func settle(_ status: String, _ reason: String?, name: String? = nil, tokens: (fcm: String, pts: String)? = tokens) {
                settlements.append(LedgerSettlement(stream: key.stream, user: key.user, device: key.device, status: status, reason: reason,
                                                    name: name, tokens: tokens))
            }
            func retry(_ after: Duration?) {
                let previous = retryAfter[key.stream] ?? nil
                retryAfter[key.stream] = [previous, after].compactMap { $0 }.max()
            }
            switch delivery {
            case .accepted(let name):
                settle("sent", nil, name: name)
            case .tokenRefused(let token, let reason):
                settle("failed", "dead_token:" + reason)
                refused.append(DeviceTokenStore.Invalidation(device: key.device, token: token, value: token == .fcm ? key.fcm : key.pts,
                                                         reason: reason, stream: key.stream))
            case .rejected(let reason):
                settle("failed", "rejected:" + reason, tokens: nil)
            case .retry(let after, let reason):
                retry(after)
                settle("pending", "retry:" + reason)
            case .configurationError(let reason):
                retry(.seconds(60))
                settle("pending", "config:" + reason)
            }
        }
        let finished = try await settle(settlements, refused: refused, plans: plans, scope: scope)
        var outcomes: [String: HandlerOutcome] = [:]
        for (streamID, plan) in plans {
            if let after = retryAfter[streamID] {
                outcomes[streamID] = .retry(after: after, reason: "push_retry")
            } else if !finished.contains(streamID) && plan.openByOthers > 0 {
                outcomes[streamID] = .retry(after: .seconds(context.claimSeconds), reason: "rows_claimed_elsewhere")
            } else {
                let count = settlements.filter { $0.stream == streamID && $0.status == "sent" }.count
                outcomes[streamID] = .done(detail: "sent \(count) of \(plan.claimed.count) claimed, \(plan.targets.count) devices considered")
            }
        }
        return outcomes
    }

    /// Writes the outcomes and clears dead tokens; for whole-stream fan-outs, records the streams with nothing
    /// left open as done for their planned start. Returns the streams that have nothing left open.
    private func settle(_ settlements: [LedgerSettlement], refused: [DeviceTokenStore.Invalidation], plans: [String: Plan],
                        scope: FanoutScope) async throws -> Set<String> {
        let planned = plans.mapValues(\.stream.snapshot.plannedStartAt)
        // The pushes went out: losing this write to a deadlock would send them again once the claims expire,
        // so it is retried (it only records what the pushes answered).
        return try await context.database.transaction(serializationRetries: 2) { connection -> Set<String> in
            try StartLedgerStore.settle(settlements, on: connection)
            try DeviceTokenStore.clear(refused, on: connection)
            guard scope == .stream else { return Set(planned.keys) }
            let stillOpen = try StartLedgerStore.streamsWithOpenRows(Array(planned.keys), on: connection)
            let done = planned.filter { !stillOpen.contains($0.key) }
            try ProgressStore.markStartsDone(done, on: connection)
            return Set(done.keys)
        }
    }
}
