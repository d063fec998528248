import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension AndroidCountdownFanout {
    /// What a device change means for the countdowns showing on it (SPEC 10.4): after a takeover by another user,
    /// the previous user's countdowns end at once (`dismissAt` = now); after a re-registration with a new
    /// `fcm_token`, each countdown gets a `start` with the current state at the new token (an end if its stream
    /// has ended meanwhile). Nil when nothing on the device concerns it; a reschedule when some countdowns it concerns
    /// are held by another sender (an update or end in flight, a `Retry-After`): the change comes back for them.
    func deviceChanged(_ device: String) async throws -> HandlerOutcome? {
        let (seconds, me) = (context.claimSeconds, context.liveness.workerID)
        let (streams, countdowns, timelines, elsewhere, heldFor) = try await context.androidCountdowns.claimChangedCountdowns(
            device: device, seconds: seconds, owner: me)
        let held: HandlerOutcome? = elsewhere == 0 ? nil
            : .reschedule(after: SessionFanout.claimedElsewhereWait(heldFor: heldFor, claimSeconds: seconds), reason: "android_countdowns_claimed_elsewhere")
        guard !countdowns.isEmpty else { return held }
        var pushes: [OutgoingPush] = []
        var addressed: [(Countdown, ending: String?)] = []
        var settlements: [String: [AndroidCountdownQueries.Settlement]] = [:]
        for countdown in countdowns {
            let release = AndroidCountdownQueries.Settlement(user: countdown.user, device: countdown.device)
            guard let stream = streams[countdown.stream], let fcm = countdown.fcmToken else {
                settlements[countdown.stream, default: []].append(release)
                continue
            }
            let takenOver = countdown.deviceUser != countdown.user
            let ended = EndReason(rawValue: stream.status.rawValue)
            if !takenOver && ended == nil && stream.now >= stream.snapshot.plannedStartAt {
                // Nothing left to count down; the expire job ends it. The new token is the one to end it at.
                settlements[countdown.stream, default: []].append(.init(user: countdown.user, device: countdown.device, tokenHash: countdown.tokenHash))
                continue
            }
            let language = PayloadLanguage.resolve(deviceLocale: countdown.locale, userLocale: countdown.userLocale)
            let role = stream.roles[countdown.user]
            do {
                let prepared = try context.payloads.prepare(stream.snapshot)
                let message: AndroidCountdownMessage
                if takenOver || ended != nil {
                    let reason = ended ?? .cancelled
                    message = try context.payloads.androidEnd(prepared, reason: reason, role: role, language: language, now: stream.now,
                                                              seq: countdown.seq, viewerCount: stream.viewerCount, dismissNow: takenOver,
                                                              latestStart: timelines[countdown.stream].map { countdown.latestShown($0) })
                    addressed.append((countdown, takenOver ? "takeover" : reason.rawValue))
                } else {
                    message = try context.payloads.androidStart(prepared, role: role, language: language, now: stream.now, seq: countdown.seq,
                                                                viewerCount: stream.viewerCount)
                    addressed.append((countdown, nil))
                }
                pushes.append(.androidCountdown(message, fcmToken: fcm))
            } catch {
                context.logger.error("android countdown message could not be built", ["device": .string(device), "error": .error(error)])
                settlements[countdown.stream, default: []].append(release)
            }
        }
        // Starts count as starts and ends as ends (metrics), each sent as one batch.
        let isEnd = addressed.map { $0.ending != nil }
        let ends = await context.push.sendAll(zip(pushes, isEnd).filter(\.1).map(\.0), kind: .end)
        let starts = await context.push.sendAll(zip(pushes, isEnd).filter { !$0.1 }.map(\.0), kind: .start)
        var (nextEnd, nextStart) = (ends.makeIterator(), starts.makeIterator())
        let deliveries = isEnd.compactMap { $0 ? nextEnd.next() : nextStart.next() }
        var refused: [DeviceTokenQueries.Invalidation] = []
        var retry = PushRetry()
        for ((countdown, ending), delivery) in zip(addressed, deliveries) {
            var settlement = AndroidCountdownQueries.Settlement(user: countdown.user, device: countdown.device)
            retry.note(delivery)
            switch delivery {
            case .accepted:
                settlement.endedReason = ending
                settlement.tokenHash = countdown.tokenHash
                // A start with the current state: what the device shows now (SPEC 12.2).
                if ending == nil, let stream = streams[countdown.stream] {
                    settlement.accepted = true
                    settlement.shownStart = stream.snapshot.plannedStartAt
                }
            case .tokenRefused(let token, let why):
                refused.append(DeviceTokenQueries.Invalidation(device: countdown.device, token: token, value: countdown.fcmToken ?? "",
                                                             reason: why, stream: countdown.stream))
                settlement.endedReason = "dead_token:" + why
            case .rejected, .retry, .configurationError:
                break
            }
            settlements[countdown.stream, default: []].append(settlement)
        }
        try await context.androidCountdowns.settleCountdowns(settlements, refused: refused, plannedStart: nil)
        if let retry = retry.outcome() ?? held { return retry }
        let accepted = deliveries.filter { $0.result == "accepted" }.count
        return .done(detail: "\(accepted) of \(countdowns.count) android countdowns on the device brought up to date")
    }
}
