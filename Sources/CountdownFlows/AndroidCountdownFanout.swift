import BlockingIO
import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

/// Updates and ends of the Android countdown (SPEC 10.4): to every Android device whose start was accepted and
/// whose end was not (the start ledger is the Android session list), at its current `fcm_token`, whatever
/// `ANDROID_COUNTDOWN` says now (off stops new starts only). Each device is claimed and given its next `seq` before
/// the push; an end accepted is final, a refused FCM token is cleared (recorded, restorable) and ends the device's
/// countdown, other failures of an end are retried until the dismissal window closes (`EndDeliveryQueries`), and
/// wait for the push service's recovery as iOS ends do (`EndRecoveryWaits`).
struct AndroidCountdownFanout: Sendable {
    let context: FlowContext

    typealias Countdown = AndroidCountdownQueries.Countdown

    /// End messages to the stream's live Android countdowns (nil when it has none and none is held elsewhere).
    func end(stream streamID: String) async throws -> HandlerOutcome? {
        let (seconds, me) = (context.claimSeconds, context.liveness.workerID)
        let loaded = try await context.androidCountdowns.claimCountdownsToEnd(streamID, seconds: seconds, owner: me)
        guard let (stream, countdowns, elsewhere, heldFor, inFlight, timeline) = loaded, let reason = EndReason(rawValue: stream.status.rawValue) else { return nil }
        if countdowns.isEmpty {
            if inFlight > 0 { return .retry(after: .seconds(1), reason: "android_starts_in_flight") }
            let wait = SessionFanout.claimedElsewhereWait(heldFor: heldFor, claimSeconds: seconds)
            return elsewhere > 0 ? .retry(after: wait, reason: "android_countdowns_claimed_elsewhere") : nil
        }
        let prepared = prepare(stream)
        let (pushes, addressed, unreachable) = build(countdowns, kind: "end") { countdown, language in
            try context.payloads.androidEnd(try prepared.get(), reason: reason, role: stream.roles[countdown.user], language: language,
                                                   now: stream.now, seq: countdown.seq, viewerCount: stream.viewerCount,
                                                   latestStart: countdown.latestShown(timeline))
        }
        var settlements: [AndroidCountdownQueries.Settlement] = []
        var refused: [DeviceTokenQueries.Invalidation] = []
        var failures = unreachable.map { EndDeliveryQueries.Failure(device: $0.device, token: "", reason: ($0.fcmToken ?? "").isEmpty ? "no_fcm_token" : "payload_error") }
        // Countdowns refused with a `Retry-After`: no end job sends to them before it has passed (SPEC 10.1).
        var recovery = SessionFanout.RecoveryWait()
        var recorded = 0
        await context.push.sendEach(pushes, kind: .end, window: context.push.batchesOut) { start, deliveries, _ in
            var accepted: [AndroidCountdownQueries.Settlement] = []
            for (countdown, delivery) in zip(addressed[start..<start + deliveries.count], deliveries) {
                recovery.note(delivery, holding: (countdown.device, countdown.user))
                switch delivery {
                case .accepted:
                    accepted.append(.init(user: countdown.user, device: countdown.device, endedReason: reason.rawValue))
                case .tokenRefused(let token, let why):
                    // The app is gone from the device (or the token moved): nothing can reach this countdown any more.
                    refused.append(DeviceTokenQueries.Invalidation(device: countdown.device, token: token, value: countdown.fcmToken ?? "",
                                                                 reason: why, stream: streamID))
                    settlements.append(.init(user: countdown.user, device: countdown.device, endedReason: "dead_token:" + why))
                case .rejected:
                    failures.append(.init(device: countdown.device, token: "", reason: "rejected"))
                case .retry:
                    failures.append(.init(device: countdown.device, token: "", reason: "retry"))
                case .configurationError:
                    failures.append(.init(device: countdown.device, token: "", reason: "config"))
                }
            }
            // Recorded as the answers arrive: a crash repeats only the ends out (SPEC 10.1).
            let written = await context.recordArrived(accepted, what: "android countdown", stream: streamID) {
                try await context.androidCountdowns.countdownsAccepted($0, stream: streamID, plannedStart: nil, ended: true)
            }
            if written { recorded += accepted.count } else { settlements += accepted }
        }
        let released = failures.compactMap { failure in countdowns.first { $0.device == failure.device } }
            .map { AndroidCountdownQueries.Settlement(user: $0.user, device: $0.device) }
        let ledger = try await context.androidCountdowns.settleCountdownEnds(streamID, settlements + released, refused: refused, done: settlements.map(\.device),
                                                                             failed: failures, windowSeconds: EndDeliveryQueries.window(context.settings),
                                                                             holding: recovery.holds)
        // As iOS ends do (SPEC 10.1, 10.4): the first push the service accepts again wakes the job.
        if let retry = await SessionFanout(context: context).retryEnds(recovery, ledger: ledger, job: .end(stream: streamID), platform: "android",
                                                                       what: "android countdown end", ["stream": .string(streamID)],
                                                                       reason: "android_end_retry") { return retry }
        if inFlight > 0 { return .retry(after: .seconds(1), reason: "android_starts_in_flight") }
        // Countdowns held by a `Retry-After` are still to end, and no worker owns them: look again when the hold ends.
        if heldFor != nil { return .retry(after: SessionFanout.claimedElsewhereWait(heldFor: heldFor, claimSeconds: seconds), reason: "android_countdowns_held") }
        return .done(detail: "ended \(recorded + settlements.count) of \(countdowns.count) android countdowns (\(reason.rawValue))")
    }

    /// Update messages with the new planned start to the stream's live Android countdowns that do not show it yet
    /// (nil when there are none).
    func update(stream streamID: String) async throws -> HandlerOutcome? {
        let (seconds, me) = (context.claimSeconds, context.liveness.workerID)
        let loaded = try await context.androidCountdowns.claimCountdownsToUpdate(streamID, seconds: seconds, owner: me)
        guard let (stream, countdowns, inFlight, timeline) = loaded else { return nil }
        // A start being sent may carry the planned start from before the change: wait until its answer is written.
        let waitForStarts: HandlerOutcome? = inFlight > 0 ? .retry(after: .seconds(1), reason: "android_starts_in_flight") : nil
        guard !countdowns.isEmpty else { return waitForStarts }
        let planned = stream.snapshot.plannedStartAt
        let prepared = prepare(stream)
        let (pushes, addressed, unreachable) = build(countdowns, kind: "update") { countdown, language in
            try context.payloads.androidUpdate(try prepared.get(), role: stream.roles[countdown.user], language: language, now: stream.now,
                                                      seq: countdown.seq, shown: countdown.shown(timeline),
                                                      viewerCount: stream.viewerCount)
        }
        var settlements = unreachable.map { AndroidCountdownQueries.Settlement(user: $0.user, device: $0.device) }
        var refused: [DeviceTokenQueries.Invalidation] = []
        var retry = PushRetry()
        var recorded = 0
        await context.push.sendEach(pushes, kind: .update, window: context.push.batchesOut) { start, deliveries, _ in
            var accepted: [AndroidCountdownQueries.Settlement] = []
            for (countdown, delivery) in zip(addressed[start..<start + deliveries.count], deliveries) {
                retry.note(delivery)
                switch delivery {
                case .accepted:
                    accepted.append(.init(user: countdown.user, device: countdown.device, accepted: true))
                case .tokenRefused(let token, let why):
                    refused.append(DeviceTokenQueries.Invalidation(device: countdown.device, token: token, value: countdown.fcmToken ?? "",
                                                                 reason: why, stream: streamID))
                    settlements.append(.init(user: countdown.user, device: countdown.device))
                case .rejected, .retry, .configurationError:
                    settlements.append(.init(user: countdown.user, device: countdown.device))
                }
            }
            // Recorded as the answers arrive: a crash repeats only the updates out (SPEC 10.1).
            let written = await context.recordArrived(accepted, what: "android countdown", stream: streamID) {
                try await context.androidCountdowns.countdownsAccepted($0, stream: streamID, plannedStart: planned, ended: false)
            }
            if written { recorded += accepted.count } else { settlements += accepted }
        }
        try await context.androidCountdowns.settleCountdowns([streamID: settlements], refused: refused, plannedStart: planned)
        if let retry = retry.outcome() { return retry }
        if let waitForStarts { return waitForStarts }
        return .done(detail: "updated \(recorded + settlements.filter(\.accepted).count) of \(countdowns.count) android countdowns")
    }

    /// The stream's texts, prepared once for all its devices.
    func prepare(_ stream: StreamSnapshotRow) -> Result<PreparedStream, PushPayloadError> {
        Result { () throws(PushPayloadError) -> PreparedStream in try context.payloads.prepare(stream.snapshot) }
    }

    /// The messages of `countdowns` (those without an FCM token, or whose message cannot be built, are unreachable).
    func build(
        _ countdowns: [Countdown], kind: String, message: (Countdown, PayloadLanguage) throws -> AndroidCountdownMessage
    ) -> (pushes: [OutgoingPush], addressed: [Countdown], unreachable: [Countdown]) {
        context.pushes(to: countdowns, kind: kind, platform: "android", what: "android countdown message", device: \.device,
                       locales: { ($0.locale, $0.userLocale) }) { countdown, language in
            guard let fcm = countdown.fcmToken, !fcm.isEmpty else { return nil }
            return .androidCountdown(try message(countdown, language), fcmToken: fcm)
        }
    }
}
