import BlockingIO
import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

extension StartFanout {
    private struct Sent {
        var claim: StartLedger.Claim
        var owner: String?
        var pts: String
        var fcm: String
        var tokenHash: String
    }

    /// The start payloads of one fan-out: one per stream, role and language, shared by its devices, built from the
    /// stream's texts prepared once.
    struct BuiltPayloads {
        private struct Key: Hashable {
            var stream: String
            var role: ParticipantRole
            var language: PayloadLanguage
            var channel: String? = nil
        }

        private var payloads: [Key: LiveActivityPayload] = [:]
        private var androidStarts: [Key: AndroidCountdownMessage] = [:]
        private var prepared: [String: PreparedStream] = [:]

        mutating func start(for stream: StreamSnapshotRow, role: ParticipantRole, language: PayloadLanguage, channel: String? = nil,
                            with builder: PushPayloadBuilder) throws(PushPayloadError) -> LiveActivityPayload {
            let key = Key(stream: stream.snapshot.id, role: role, language: language, channel: channel)
            if let payload = payloads[key] { return payload }
            let payload = try builder.start(try prepare(stream, with: builder), role: role, language: language, now: stream.now,
                                            viewerCount: stream.viewerCount, channel: channel)
            payloads[key] = payload
            return payload
        }

        /// The Android countdown's start (`seq` 1: the first message of a device and stream), shared like `start`.
        mutating func androidStart(for stream: StreamSnapshotRow, role: ParticipantRole, language: PayloadLanguage,
                                   with builder: PushPayloadBuilder) throws(PushPayloadError) -> AndroidCountdownMessage {
            let key = Key(stream: stream.snapshot.id, role: role, language: language)
            if let message = androidStarts[key] { return message }
            let message = try builder.androidStart(try prepare(stream, with: builder), role: role, language: language, now: stream.now,
                                                   seq: 1, viewerCount: stream.viewerCount)
            androidStarts[key] = message
            return message
        }

        private mutating func prepare(_ stream: StreamSnapshotRow, with builder: PushPayloadBuilder) throws(PushPayloadError) -> PreparedStream {
            if let known = prepared[stream.snapshot.id] { return known }
            let texts = try builder.prepare(stream.snapshot)
            prepared[stream.snapshot.id] = texts
            return texts
        }
    }

    /// What one fan-out learned across its pages.
    private struct Tally {
        var retryAfter: [String: Duration?] = [:]  // streams that need a retry, with the longest Retry-After asked for
        var sent: [String: Int] = [:]
        var claimed: [String: Int] = [:]

        mutating func retry(_ stream: String, after: Duration?) {
            let previous = retryAfter[stream] ?? nil
            retryAfter[stream] = [previous, after].compactMap { $0 }.max()
        }
    }

    /// Sends the claimed rows of every plan page by page (claiming the next page while streams have more pending
    /// rows), hands each outcome to the settler as it arrives, waits until all are written, and decides each stream.
    func send(_ plans: [String: Plan], scope: FanoutScope, owners: (dead: [String], alive: [String])) async throws -> [String: HandlerOutcome] {
        let settler = context.settler
        let ticket = await settler.openTicket()
        var tally = Tally()
        do {
            try await sendPages(plans, scope: scope, owners: owners, ticket: ticket, tally: &tally)
        } catch {
            await settler.abandon(ticket)
            throw error
        }
        try await settler.settle(ticket)
        let finished = try await recordProgress(plans, scope: scope, retrying: Set(tally.retryAfter.keys))
        var outcomes: [String: HandlerOutcome] = [:]
        for (streamID, plan) in plans {
            if let after = tally.retryAfter[streamID] {
                outcomes[streamID] = .retry(after: after, reason: "push_retry")
            } else if !finished.contains(streamID) && plan.openByOthers > 0 {
                outcomes[streamID] = .retry(after: .seconds(context.claimSeconds), reason: "rows_claimed_elsewhere")
            } else {
                outcomes[streamID] = .done(detail: "sent \(tally.sent[streamID] ?? 0) of \(tally.claimed[streamID] ?? 0) claimed, "
                    + "\(plan.targets.count) devices considered")
            }
        }
        return outcomes
    }

    /// Sends the first page (claimed with the plans), then claims and sends further pages while the streams have
    /// more pending rows.
    private func sendPages(_ plans: [String: Plan], scope: FanoutScope, owners: (dead: [String], alive: [String]),
                           ticket: StartSettler.Ticket, tally: inout Tally) async throws {
        var page = plans
        var built = BuiltPayloads()
        var channels = await StartChannels.channels(of: plans, context: context)
        while true {
            let claimedInPage = page.values.reduce(0) { $0 + $1.claimed.count }
            // iOS 18 devices of a stream whose channel another caller is creating wait for it; the others go first.
            let modern = await channels.modernDevices(in: page, context: context)
            let waiting = channels.waitingForChannel(page, modern: modern)
            var rest = page
            if !waiting.isEmpty {
                let first: [String: Plan]
                (first, rest) = StartChannels.split(page, waiting: waiting)
                await send(page: first, ticket: ticket, built: &built, tally: &tally, channels: await channels.devicesOnChannel(first, modern: modern, context: context))
                await channels.awaitPending(context: context)
            }
            await send(page: rest, ticket: ticket, built: &built, tally: &tally, channels: await channels.devicesOnChannel(rest, modern: modern, context: context))
            // A stream asked to retry stops paging: its rows given back as pending must wait for the retry. Every
            // other stream of the fan-out is asked again, not only this page's: a full page taken in key order may
            // have reached none of a later stream's rows.
            let more = plans.keys.filter { tally.retryAfter[$0] == nil }
            guard claimedInPage >= context.startPageSize, !more.isEmpty else { break }
            let claimed = try await claimPage(more.sorted(), scope: scope, owners: owners)
            if claimed.isEmpty { break }
            page = [:]
            for (streamID, rows) in claimed {
                page[streamID] = plans[streamID]
                page[streamID]?.claimed = rows
            }
        }
    }

    /// Claims the next page of `streams`' pending rows for this worker.
    private func claimPage(_ streams: [String], scope: FanoutScope, owners: (dead: [String], alive: [String])) async throws
        -> [String: [StartLedger.Claim]] {
        let (seconds, me, limit) = (context.claimSeconds, context.liveness.workerID, context.startPageSize)
        let claims = try await context.releasingClaims { noteClaims in
            try await context.starts.claimStarts(streams, scope: scope, seconds: seconds, owner: me, owners: owners, limit: limit, noteClaims: noteClaims)
        }
        await context.settler.hold(claims.map(\.key))
        return Dictionary(grouping: claims, by: \.key.stream)
    }

    /// Sends one page's pushes concurrently; each batch's outcomes go to the settler as soon as they are known, with
    /// the batch's slots.
    private func send(page plans: [String: Plan], ticket: StartSettler.Ticket, built: inout BuiltPayloads,
                      tally: inout Tally, channels: [StartLedger.Key: String] = [:]) async {
        let owner = context.liveness.workerID
        var pushes: [OutgoingPush] = []
        var sent: [Sent] = []
        var immediate: [StartSettler.Result] = []
        for (streamID, plan) in plans {
            tally.claimed[streamID, default: 0] += plan.claimed.count
            for claim in plan.claimed {
                let android = context.settings.androidCountdownEnabled && plan.targets[claim.key]?.candidate.isAndroid == true
                guard let target = plan.targets[claim.key], target.skip == nil,
                      let pts = android ? "" : target.candidate.pushToStartToken else {
                    immediate.append(.init(StartLedger.Settlement(claim, owner: owner, status: .skipped, reason: "no_longer_eligible")))
                    continue
                }
                let language = PayloadLanguage.resolve(deviceLocale: target.candidate.locale, userLocale: target.candidate.userLocale)
                let role = ParticipantRole(rawValue: target.candidate.role) ?? .guest
                do {
                    let fcm = target.candidate.fcmToken ?? ""
                    if android {
                        let message = try built.androidStart(for: plan.stream, role: role, language: language, with: context.payloads)
                        pushes.append(.androidCountdown(message, fcmToken: fcm))
                    } else {
                        let payload = try built.start(for: plan.stream, role: role, language: language, channel: channels[claim.key],
                                                      with: context.payloads)
                        pushes.append(.liveActivity(payload, fcmToken: fcm, activityToken: pts))
                    }
                    sent.append(Sent(claim: claim, owner: owner, pts: pts, fcm: fcm, tokenHash: target.tokenHash))
                } catch {
                    immediate.append(.init(StartLedger.Settlement(claim, owner: owner, status: .failed, reason: "payload_error")))
                    context.logger.error("start payload could not be built", ["stream": .string(streamID), "error": .error(error)])
                }
            }
        }
        let settler = context.settler
        await settler.add(immediate, to: ticket)
        // Each batch's slots go back as the settler commits its outcomes: a slot's next push waits for the record.
        await context.push.sendEach(pushes, kind: .start, keepingSlots: true) { start, deliveries, slots in
            var results: [StartSettler.Result] = []
            results.reserveCapacity(deliveries.count)
            for (offset, delivery) in deliveries.enumerated() {
                results.append(Self.result(of: delivery, for: sent[start + offset], tally: &tally))
            }
            await settler.add(results, to: ticket, slots: slots)
        }
    }

    /// The ledger outcome of one push.
    private static func result(of delivery: Delivery, for push: Sent, tally: inout Tally) -> StartSettler.Result {
        func settle(_ status: StartLedger.Status, _ reason: String?, name: String? = nil, tokenHash: String? = push.tokenHash) -> StartLedger.Settlement {
            StartLedger.Settlement(push.claim, owner: push.owner, status: status, reason: reason, name: name, tokenHash: tokenHash)
        }
        let key = push.claim.key
        switch delivery {
        case .accepted(let name):
            tally.sent[key.stream, default: 0] += 1
            return .init(settle(.sent, nil, name: name))
        case .tokenRefused(let token, let reason):
            return .init(settle(.failed, "dead_token:" + reason), refused: DeviceTokenQueries.Invalidation(
                device: key.device, token: token, value: token == .fcm ? push.fcm : push.pts, reason: reason, stream: key.stream))
        case .rejected(let reason):
            return .init(settle(.failed, "rejected:" + reason, tokenHash: nil))
        case .retry(let after, let reason):
            tally.retry(key.stream, after: after)
            return .init(settle(.pending, "retry:" + reason))
        case .configurationError(let reason):
            tally.retry(key.stream, after: .seconds(60))
            return .init(settle(.pending, "config:" + reason))
        }
    }

    /// For whole-stream fan-outs, records the streams with nothing left open as done for their planned start.
    /// Returns the streams that have nothing left open. A stream whose every row this fan-out claimed at once and
    /// none of which is to be retried has nothing open once its outcomes are written, without asking.
    private func recordProgress(_ plans: [String: Plan], scope: FanoutScope, retrying: Set<String>) async throws -> Set<String> {
        let planned = plans.mapValues(\.stream.snapshot.plannedStartAt)
        guard scope == .stream else { return Set(planned.keys) }
        let unknown = plans.filter { !$0.value.claimedEveryRow || retrying.contains($0.key) }.map(\.key)
        return try await context.starts.markStartsDone(planned, asking: unknown)
    }
}
