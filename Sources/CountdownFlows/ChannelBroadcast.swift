import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

/// A stream's updates and end as one broadcast request on its channel (SPEC 12.5), beside the token pushes to the
/// sessions whose activity is not on the channel (an activity with a runtime token registered it: it is not on a
/// channel). Each returns nil when the stream has no usable channel: the token part is then the whole job.
///
/// One content for every subscriber: the language is the default one and the content carries no participant role.
/// Idempotent: an update is sent only while the channel does not show the planned start; an end retires the channel,
/// so a retried end job does not broadcast again.
struct ChannelBroadcast: Sendable {
    let context: FlowContext
    let setup: BroadcastSetup

    /// The broadcast's language: every subscriber gets the same content.
    static let language = PayloadLanguage.resolve(deviceLocale: nil, userLocale: nil)

    /// The update showing the planned start, with `apns-priority` by 12.2's rule against the channel's last accepted
    /// push and `apns-expiration` = the new planned start; the long move when the channel's activities would outlive
    /// their 8 hours.
    func update(stream streamID: String) async throws -> HandlerOutcome? {
        guard let (stream, channel) = try await setup.store.streamAndChannel(streamID), let channel, let channelID = channel.channelID,
              stream.status == .scheduled else { return nil }
        let planned = stream.snapshot.plannedStartAt
        if let used = channel.usedAt, planned.timeIntervalSince(used) > Double(SessionUpdatePolicy.activityLifetimeSeconds) {
            return try await longMove(stream, channel: channel, channelID: channelID)
        }
        if channel.shownStartAt == planned { return .done(detail: "the channel shows the current start") }
        let payload = try context.payloads.update(stream.snapshot, role: nil, language: Self.language, now: stream.now, viewerCount: stream.viewerCount,
                                                  priority: UpdatePriority.of(newStart: planned, shown: channel.shownStartAt, now: stream.now))
        let outcome = await setup.channels.broadcast(payload, on: channelID)
        if case .accepted = outcome {
            try await setup.store.markChannelUsed(channelID, shown: planned, replacing: true)
            return .done(detail: "update broadcast on the stream's channel")
        }
        if try await channelGone(outcome, stream: streamID, channelID: channelID) {
            // Recreated once, for the starts still to come; its activities left with the old channel get nothing more
            // from it (their token-less activities cannot be reached another way).
            _ = await ChannelProvisioner(setup: setup, logger: context.logger).channel(for: streamID)
            return nil
        }
        return retryOrGiveUp(outcome, stream: streamID, what: "update")
    }

    /// The end on the channel (`apns-expiration`: `endExpiration`), then the channel waits for that moment to be
    /// deleted (`ChannelKeeper`).
    func end(stream streamID: String) async throws -> HandlerOutcome? {
        guard let (stream, channel) = try await setup.store.streamAndChannel(streamID), let channel, let channelID = channel.channelID,
              stream.status.isTerminal, let reason = EndReason(rawValue: stream.status.rawValue) else { return nil }
        var payload = try context.payloads.end(stream.snapshot, reason: reason, role: nil, language: Self.language, now: stream.now,
                                               viewerCount: stream.viewerCount)
        let keep = endKept(channel, stream: stream)
        payload.apnsHeaders["apns-expiration"] = String(keep.expiration)
        let outcome = await setup.channels.broadcast(payload, on: channelID)
        if case .accepted = outcome {
            try await setup.store.retireChannel(channelID, ended: true, deleteAfterSeconds: keep.seconds)
            setup.metrics.endRequests(path: "broadcast", count: 1)
            return .done(detail: "end broadcast on the stream's channel")
        }
        if try await channelGone(outcome, stream: streamID, channelID: channelID) { return nil }
        return retryOrGiveUp(outcome, stream: streamID, what: "end")
    }

    /// The long move: the old channel's activities get the end saying the stream moved (seen until the dismissal
    /// date), the channel is retired and the stream's outlived start rows open again, so the next start creates a new
    /// channel and starts those devices on it.
    private func longMove(_ stream: StreamSnapshotRow, channel: BroadcastChannel, channelID: String) async throws -> HandlerOutcome? {
        var payload = try context.payloads.moved(stream.snapshot, role: nil, language: Self.language, timeZone: nil, now: stream.now,
                                                 viewerCount: stream.viewerCount)
        let keep = endKept(channel, stream: stream)
        payload.apnsHeaders["apns-expiration"] = String(keep.expiration)
        let streamID = stream.snapshot.id
        let outcome = await setup.channels.broadcast(payload, on: channelID)
        let gone: Bool
        if case .rejected(let reason) = outcome { gone = channelGoneReasons.contains(reason) } else { gone = false }
        guard case .accepted = outcome else {
            if !gone { return retryOrGiveUp(outcome, stream: streamID, what: "long move end") }
            try await setup.store.retireMovedChannel(channelID, stream: streamID, deleteAfterSeconds: 0)
            return nil
        }
        try await setup.store.retireMovedChannel(channelID, stream: streamID, deleteAfterSeconds: keep.seconds)
        context.logger.info("stream moved past its channel's 8 hours: ended on the old channel; the next start opens a new one",
                            ["stream": .string(streamID), "channel": .string(channelID)])
        return .done(detail: "long move ended on the old channel")
    }

    /// How long an end on `channel` is kept for a phone offline: its `apns-expiration` (epoch seconds, `EndExpiry`) and
    /// the seconds until then, which the channel outlives (Apple delivers nothing on a deleted channel). The countdown it
    /// ends is the latest planned start any of its activities may show (one that missed an update moving the start
    /// earlier still shows the later one), at most 8 hours from the channel's first start (`usedAt`).
    private func endKept(_ channel: BroadcastChannel, stream: StreamSnapshotRow) -> (expiration: Int, seconds: Double) {
        let lastsUntil = channel.usedAt?.addingTimeInterval(Double(SessionUpdatePolicy.activityLifetimeSeconds))
        let expiration = EndExpiry.epochSeconds(now: stream.now, dismissAfterSeconds: context.settings.endDismissAfterSeconds,
                                                shownStart: channel.latestStartAt ?? channel.shownStartAt ?? stream.snapshot.plannedStartAt,
                                                expireAfterSeconds: context.settings.expireAfterSeconds, lastsUntil: lastsUntil)
        return (expiration, Double(expiration) - stream.now.timeIntervalSince1970)
    }

    /// Apple does not know the channel: retired at once (nothing to delete later), said so; true when so.
    private func channelGone(_ outcome: Delivery, stream: String, channelID: String) async throws -> Bool {
        guard case .rejected(let reason) = outcome, channelGoneReasons.contains(reason) else { return false }
        try await setup.store.retireChannel(channelID, ended: false, deleteAfterSeconds: 0)
        context.logger.warn("APNs does not know the stream's channel; its pushes go by token",
                            ["stream": .string(stream), "channel": .string(channelID), "reason": .string(reason)])
        setup.metrics.tokenFallback(reason: "channel_gone")
        return true
    }

    /// `TooManyRequests` and server errors wait for `Retry-After` (else the job's backoff); auth errors a minute; a
    /// refusal a retry cannot change is logged and left to the token part.
    private func retryOrGiveUp(_ outcome: Delivery, stream: String, what: String) -> HandlerOutcome? {
        switch outcome {
        case .retry(let after, let reason):
            return .retry(after: after, reason: "broadcast_\(reason)")
        case .configurationError(let reason):
            context.logger.error("APNs refused the broadcast's credentials", ["stream": .string(stream), "push": .string(what), "reason": .string(reason)])
            return .retry(after: .seconds(60), reason: "broadcast_config")
        case .rejected(let reason), .tokenRefused(_, let reason):
            context.logger.error("APNs refused the broadcast", ["stream": .string(stream), "push": .string(what), "reason": .string(reason)])
            return nil
        case .accepted:
            return nil
        }
    }
}
