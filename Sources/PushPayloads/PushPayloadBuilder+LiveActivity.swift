import Foundation
import JSON

extension PushPayloadBuilder {
    /// The push-to-start payload for one target user: attributes, a counting-down content-state, a localized
    /// alert with the real minutes left, `stale-date` = planned start + expireAfter, and `input-push-token: 1`, or,
    /// with `channel` (a device on iOS 18 or later, the stream's broadcast channel, SPEC 12.5), `input-push-channel`
    /// = that channel's id, so the activity subscribes to the channel instead of asking for a token.
    /// Headers: `apns-priority: 10`, `apns-expiration: <planned start>` (dropped rather than shown late).
    public func start(
        _ stream: StreamSnapshot, role: ParticipantRole, language: PayloadLanguage, now: Date, viewerCount: Int = 0, channel: String? = nil
    ) throws(PushPayloadError) -> LiveActivityPayload {
        try start(prepare(stream), role: role, language: language, now: now, viewerCount: viewerCount, channel: channel)
    }

    /// `start` for a stream prepared once for all its payloads (a fan-out builds one per role and language).
    public func start(
        _ prepared: PreparedStream, role: ParticipantRole, language: PayloadLanguage, now: Date, viewerCount: Int = 0, channel: String? = nil
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let (stream, streamId) = (prepared.snapshot, prepared.streamId)
        let texts = LocalizedTexts.of(language)
        let scheduledStartAt = Self.epochSeconds(stream.plannedStartAt)
        let minutesLeft = Self.minutesLeft(until: stream.plannedStartAt, now: now)
        let bytes = try fittedAPS(prepared, texts) { fitted in
            aps { json in
                json.key("alert")
                json.object { alert in
                    alert.member("body", texts.countdownSentence(title: fitted.title, minutesLeft: minutesLeft))
                    alert.member("title", texts.startAlertTitle)
                }
                json.key("attributes")
                json.object { attributes in
                    attributes.member("creatorName", fitted.names)
                    attributes.member("deepLink", streamLink(streamId))
                    attributes.member("role", role.rawValue)
                    attributes.member("streamId", streamId)
                    attributes.member("streamTitle", fitted.title)
                    attributes.member("title", fitted.title)
                }
                json.member("attributes-type", settings.attributesType)
                contentState(&json, stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, display: .countdown)
                json.member("event", LiveActivityEvent.start.rawValue)
                if let channel {
                    json.member("input-push-channel", channel)
                } else {
                    json.key("input-push-token")
                    json.int(1)
                }
                json.key("stale-date")
                json.int(scheduledStartAt + settings.expireAfterSeconds)
                json.key("timestamp")
                json.int(Self.epochSeconds(now))
            }
        }
        return LiveActivityPayload(event: .start, apnsHeaders: [
            "apns-priority": "10",
            "apns-expiration": String(scheduledStartAt),
        ], apsJSON: bytes)
    }

    /// The update sent to a running activity after a reschedule: the full counting-down content-state with the
    /// new `scheduledStartAt`, and the `stale-date` that goes with it. No alert. `role` is nil when the
    /// session has no user. Headers: `apns-priority` by `priority` (`UpdatePriority`: 10 or 5) and `apns-expiration`
    /// = the new planned start.
    public func update(
        _ stream: StreamSnapshot, role: ParticipantRole?, language: PayloadLanguage, now: Date, viewerCount: Int = 0,
        priority: UpdatePriority = .immediate
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let prepared = try prepare(stream)
        let texts = LocalizedTexts.of(language)
        let scheduledStartAt = Self.epochSeconds(stream.plannedStartAt)
        let bytes = try fittedAPS(prepared, texts) { fitted in
            aps { json in
                contentState(&json, stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, display: .countdown)
                json.member("event", LiveActivityEvent.update.rawValue)
                json.key("stale-date")
                json.int(scheduledStartAt + settings.expireAfterSeconds)
                json.key("timestamp")
                json.int(Self.epochSeconds(now))
            }
        }
        return LiveActivityPayload(event: .update, apnsHeaders: ["apns-priority": priority.apnsPriority, "apns-expiration": String(scheduledStartAt)],
                                   apsJSON: bytes)
    }

    /// The end push: an ended content-state with `endedReason`, its texts and deep links (`deepLink` and
    /// `deepLinkUrl` both the stream for ready/started, both home for cancelled/expired), and
    /// `dismissal-date` = now + endDismissAfter (`dismissNow`: now, so iOS removes the activity at once, as after a
    /// device takeover). The content-state keeps title, names and role so the ended activity still shows what it
    /// was about.
    public func end(
        _ stream: StreamSnapshot, reason: EndReason, role: ParticipantRole?, language: PayloadLanguage, now: Date,
        viewerCount: Int = 0, dismissNow: Bool = false
    ) throws(PushPayloadError) -> LiveActivityPayload {
        try ending(stream, display: .ended(reason), role: role, language: language, now: now, viewerCount: viewerCount, dismissNow: dismissNow)
    }

    /// The end of an activity whose stream moved past its 8-hour life (SPEC 12.2, the long move): an ended
    /// content-state without `endedReason` (none of its values fits), `statusText` saying the stream moved and
    /// `subtitle` the new planned start as a day and a time in `timeZone` (the device's; nil: UTC, said so), deep links
    /// to the stream, and `dismissal-date` = now + endDismissAfter so the person sees it.
    public func moved(
        _ stream: StreamSnapshot, role: ParticipantRole?, language: PayloadLanguage, timeZone: TimeZone?, now: Date, viewerCount: Int = 0
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let texts = LocalizedTexts.of(language)
        let subtitle = texts.movedTo(texts.when(stream.plannedStartAt, timeZone: timeZone))
        return try ending(stream, display: .moved(status: texts.movedStatus, subtitle: subtitle), role: role, language: language, now: now,
                          viewerCount: viewerCount, dismissNow: false)
    }

    private func ending(
        _ stream: StreamSnapshot, display: ContentDisplay, role: ParticipantRole?, language: PayloadLanguage, now: Date, viewerCount: Int,
        dismissNow: Bool
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let prepared = try prepare(stream)
        let texts = LocalizedTexts.of(language)
        let bytes = try fittedAPS(prepared, texts) { fitted in
            aps { json in
                contentState(&json, stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, display: display)
                json.key("dismissal-date")
                json.int(Self.epochSeconds(now) + (dismissNow ? 0 : settings.endDismissAfterSeconds))
                json.member("event", LiveActivityEvent.end.rawValue)
                json.key("timestamp")
                json.int(Self.epochSeconds(now))
            }
        }
        return LiveActivityPayload(event: .end, apnsHeaders: ["apns-priority": "10"], apsJSON: bytes)
    }

    /// What a content-state shows.
    private enum ContentDisplay {
        /// Counting down to the planned start.
        case countdown
        /// Ended for a reason.
        case ended(EndReason)
        /// Ended because the stream moved (no `endedReason`), with these texts.
        case moved(status: String, subtitle: String)
    }

    /// The `{"aps":…}` bytes built from the stream's title and names, shortened to fit when needed.
    private func fittedAPS(
        _ prepared: PreparedStream, _ texts: LocalizedTexts, build: (VariableTexts) -> [UInt8]
    ) throws(PushPayloadError) -> [UInt8] {
        try PayloadFitting.fit(title: prepared.title.isEmpty ? texts.untitledStream : prepared.title, names: prepared.names,
                               limit: LiveActivityPayload.maxAPSBytes, streamId: prepared.streamId, build: build).bytes
    }

    /// `{"aps":{…}}` with the members `body` writes. Every object's members are written with their keys sorted
    /// by UTF-8 bytes (the canonical form of `JSONValue.encoded()`, checked by the tests), without building a tree.
    private func aps(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter(capacity: 1024)
        json.object { root in
            root.key("aps")
            root.object(body)
        }
        return json.bytes
    }

    /// The `content-state` member: counting down (deepLinkUrl home, as the mobile contract's example has it), ended for a
    /// reason, or ended by a move (both links the stream).
    private func contentState(
        _ json: inout JSONWriter, _ stream: StreamSnapshot, _ fitted: VariableTexts, _ texts: LocalizedTexts,
        role: ParticipantRole?, now: Date, viewerCount: Int, display: ContentDisplay
    ) {
        let (link, linkURL, status, subtitle): (String, String, String, String)
        var endedReason: EndReason?
        switch display {
        case .countdown:
            (link, linkURL, status, subtitle) = (streamLink(stream.id), homeLink, texts.countdownStatus, texts.countdownSubtitle)
        case .ended(let reason):
            let opens = reason.opensStream ? streamLink(stream.id) : homeLink
            (link, linkURL, status, subtitle) = (opens, opens, texts.endStatus(reason), texts.endSubtitle(reason))
            endedReason = reason
        case let .moved(movedStatus, movedSubtitle):
            (link, linkURL, status, subtitle) = (streamLink(stream.id), streamLink(stream.id), movedStatus, movedSubtitle)
        }
        json.key("content-state")
        json.object { state in
            state.member("creatorName", fitted.names)
            state.member("deepLink", link)
            state.member("deepLinkUrl", linkURL)
            state.key("displayState")
            if case .countdown = display { state.string("countdown") } else { state.string("ended") }
            if let endedReason {
                state.member("endedReason", endedReason.rawValue)
            }
            if let role {
                state.member("role", role.rawValue)
            }
            state.key("scheduledStartAt")
            state.int(Self.epochSeconds(stream.plannedStartAt))
            state.member("statusText", status)
            state.member("streamId", stream.id)
            state.member("streamTitle", fitted.title)
            state.member("subtitle", subtitle)
            state.member("title", fitted.title)
            state.key("updatedAt")
            state.int(Self.epochSeconds(now))
            state.key("viewerCount")
            state.int(max(0, viewerCount))
        }
    }
}
