import Foundation

extension PushPayloadBuilder {
    /// The Android countdown's `start` (SPEC 10.4): the common keys (texts as the iOS start alert's), `staleAt` =
    /// planned start + expireAfter; `HIGH`, ttl = seconds to the planned start (at least 1), collapse key
    /// `countdown-<short hash>`. `seq` orders the messages of one device and stream (at least 1).
    public func androidStart(
        _ prepared: PreparedStream, role: ParticipantRole?, language: PayloadLanguage, now: Date, seq: Int, viewerCount: Int = 0
    ) throws(PushPayloadError) -> AndroidCountdownMessage {
        try androidCountdown(prepared, event: .start, priority: .high, role: role, language: language, now: now, seq: seq,
                             viewerCount: viewerCount)
    }

    /// The Android countdown's `update` after a reschedule: as `androidStart` with the stream's new planned start,
    /// priority by `UpdatePriority` against `shown`, the planned start of the last message the device accepted (its
    /// start included; nil: not known).
    public func androidUpdate(
        _ prepared: PreparedStream, role: ParticipantRole?, language: PayloadLanguage, now: Date, seq: Int,
        shown: Date?, viewerCount: Int = 0
    ) throws(PushPayloadError) -> AndroidCountdownMessage {
        let priority = UpdatePriority.of(newStart: prepared.snapshot.plannedStartAt, shown: shown, now: now).android
        return try androidCountdown(prepared, event: .update, priority: priority, role: role, language: language, now: now, seq: seq,
                                    viewerCount: viewerCount)
    }

    /// The Android countdown's `end`: `endedReason`, that reason's texts (iOS `statusText` / `subtitle`) and deep
    /// link, `dismissAt` = now + endDismissAfter (`dismissNow`: now, for a takeover); `HIGH`, ttl = the longer of
    /// endDismissAfter and the seconds until the countdown's `staleAt` (`AndroidCountdownMessage.endTTLSeconds`; from
    /// `latestStart`, the latest planned start the device may show, else the stream's), and no collapse key (a device
    /// keeps only 4; an end must never be collapsed).
    public func androidEnd(
        _ prepared: PreparedStream, reason: EndReason, role: ParticipantRole?, language: PayloadLanguage, now: Date, seq: Int,
        viewerCount: Int = 0, dismissNow: Bool = false, latestStart: Date? = nil
    ) throws(PushPayloadError) -> AndroidCountdownMessage {
        try androidCountdown(prepared, event: .end(reason, dismissNow: dismissNow, latestStart: latestStart), priority: .high, role: role,
                             language: language, now: now, seq: seq, viewerCount: viewerCount)
    }

    /// Which message and, for an end, why and how soon it goes away.
    private enum AndroidEvent {
        case start
        case update
        case end(EndReason, dismissNow: Bool, latestStart: Date?)

        var event: LiveActivityEvent {
            switch self {
            case .start: .start
            case .update: .update
            case .end: .end
            }
        }
    }

    private func androidCountdown(
        _ prepared: PreparedStream, event: AndroidEvent, priority: AndroidPriority, role: ParticipantRole?, language: PayloadLanguage,
        now: Date, seq: Int, viewerCount: Int
    ) throws(PushPayloadError) -> AndroidCountdownMessage {
        let (stream, streamId) = (prepared.snapshot, prepared.streamId)
        let texts = LocalizedTexts.of(language)
        let scheduledStartAt = Self.epochSeconds(stream.plannedStartAt)
        let sentAt = Self.epochSeconds(now)
        let minutesLeft = Self.minutesLeft(until: stream.plannedStartAt, now: now)
        var common: [String: String] = [
            "type": AndroidCountdownMessage.dataType, "event": event.event.rawValue, "streamId": streamId,
            "scheduledStartAt": String(scheduledStartAt), "timestamp": String(sentAt), "viewerCount": String(max(0, viewerCount)),
            "seq": String(max(1, seq)),
        ]
        if let role { common["role"] = role.rawValue }
        let ttlSeconds: Int
        let collapseKey: String?
        let endReason: EndReason?
        switch event {
        case .start, .update:
            common["staleAt"] = String(scheduledStartAt + settings.expireAfterSeconds)
            common["deepLink"] = streamLink(streamId)
            common["title"] = texts.startAlertTitle
            ttlSeconds = AndroidCountdownMessage.countdownTTLSeconds(plannedStart: stream.plannedStartAt, now: now)
            collapseKey = CollapseID.countdown(stream: streamId)
            endReason = nil
        case let .end(reason, dismissNow, latestStart):
            common["endedReason"] = reason.rawValue
            common["dismissAt"] = String(sentAt + (dismissNow ? 0 : settings.endDismissAfterSeconds))
            common["deepLink"] = reason.opensStream ? streamLink(streamId) : homeLink
            common["title"] = texts.endStatus(reason)
            common["body"] = texts.endSubtitle(reason)
            ttlSeconds = AndroidCountdownMessage.endTTLSeconds(endDismissAfterSeconds: settings.endDismissAfterSeconds,
                                                               plannedStart: latestStart ?? stream.plannedStartAt,
                                                               expireAfterSeconds: settings.expireAfterSeconds,
                                                               now: now)
            collapseKey = nil
            endReason = reason
        }
        func data(_ fitted: VariableTexts) -> [String: String] {
            var data = common
            data["streamTitle"] = fitted.title
            data["creatorName"] = fitted.names
            if endReason == nil { data["body"] = texts.countdownSentence(title: fitted.title, minutesLeft: minutesLeft) }
            return data
        }
        let fitted = try PayloadFitting.fit(
            title: prepared.title.isEmpty ? texts.untitledStream : prepared.title, names: prepared.names,
            limit: AndroidCountdownMessage.maxDataBytes, streamId: streamId
        ) { AndroidCountdownMessage.dataJSON(data($0)) }
        return AndroidCountdownMessage(event: event.event, priority: priority, ttlSeconds: ttlSeconds, collapseKey: collapseKey,
                                       data: data(fitted.texts))
    }
}
