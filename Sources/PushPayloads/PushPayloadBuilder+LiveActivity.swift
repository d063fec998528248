import Foundation
import JSON

extension PushPayloadBuilder {
    /// The push-to-start payload for one target user: attributes, a counting-down content-state, a localized
    /// alert with the real minutes left, `stale-date` = planned start + expireAfter, `input-push-token: 1`.
    /// Headers: `apns-priority: 10`, `apns-expiration: <planned start>` (dropped rather than shown late).
    public func start(
        _ stream: StreamSnapshot, role: ParticipantRole, language: PayloadLanguage, now: Date, viewerCount: Int = 0
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let streamId = try checkedStreamId(stream)
        let texts = LocalizedTexts.of(language)
        let scheduledStartAt = Self.epochSeconds(stream.plannedStartAt)
        let minutesLeft = Self.minutesLeft(until: stream.plannedStartAt, now: now)
        let bytes = try fittedAPS(stream, streamId, texts) { fitted in
            let attributes: JSONValue = [
                "streamId": .string(streamId),
                "creatorName": .string(fitted.names),
                "streamTitle": .string(fitted.title),
                "title": .string(fitted.title),
                "role": .string(role.rawValue),
                "deepLink": .string(streamLink(streamId)),
            ]
            return ["aps": [
                "timestamp": .int(Self.epochSeconds(now)),
                "event": .string(LiveActivityEvent.start.rawValue),
                "attributes-type": .string(settings.attributesType),
                "attributes": attributes,
                "content-state": contentState(stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, ended: nil),
                "stale-date": .int(scheduledStartAt + settings.expireAfterSeconds),
                "input-push-token": 1,
                "alert": [
                    "title": .string(texts.startAlertTitle),
                    "body": .string(texts.countdownSentence(title: fitted.title, minutesLeft: minutesLeft)),
                ],
            ]]
        }
        return LiveActivityPayload(event: .start, apnsHeaders: [
            "apns-priority": "10",
            "apns-expiration": String(scheduledStartAt),
        ], apsJSON: bytes)
    }

    /// The update sent to a running activity after a reschedule: the full counting-down content-state with the
    /// new `scheduledStartAt`, and the `stale-date` that goes with it. No alert. `role` is nil when the
    /// session has no user.
    public func update(
        _ stream: StreamSnapshot, role: ParticipantRole?, language: PayloadLanguage, now: Date, viewerCount: Int = 0
    ) throws(PushPayloadError) -> LiveActivityPayload {
        let streamId = try checkedStreamId(stream)
        let texts = LocalizedTexts.of(language)
        let scheduledStartAt = Self.epochSeconds(stream.plannedStartAt)
        let bytes = try fittedAPS(stream, streamId, texts) { fitted in
            ["aps": [
                "timestamp": .int(Self.epochSeconds(now)),
                "event": .string(LiveActivityEvent.update.rawValue),
                "content-state": contentState(stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, ended: nil),
                "stale-date": .int(scheduledStartAt + settings.expireAfterSeconds),
            ]]
        }
        return LiveActivityPayload(event: .update, apnsHeaders: ["apns-priority": "10"], apsJSON: bytes)
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
        let streamId = try checkedStreamId(stream)
        let texts = LocalizedTexts.of(language)
        let bytes = try fittedAPS(stream, streamId, texts) { fitted in
            ["aps": [
                "timestamp": .int(Self.epochSeconds(now)),
                "event": .string(LiveActivityEvent.end.rawValue),
                "content-state": contentState(stream, fitted, texts, role: role, now: now, viewerCount: viewerCount, ended: reason),
                "dismissal-date": .int(Self.epochSeconds(now) + (dismissNow ? 0 : settings.endDismissAfterSeconds)),
            ]]
        }
        return LiveActivityPayload(event: .end, apnsHeaders: ["apns-priority": "10"], apsJSON: bytes)
    }

    /// The `{"aps":…}` bytes built from the stream's title and names, shortened to fit when needed.
    private func fittedAPS(
        _ stream: StreamSnapshot, _ streamId: String, _ texts: LocalizedTexts, build: (VariableTexts) -> JSONValue
    ) throws(PushPayloadError) -> [UInt8] {
        try PayloadFitting.encode(title: displayTitle(stream, texts), names: participantNames(stream),
                                  limit: LiveActivityPayload.maxAPSBytes, streamId: streamId, build: build)
    }

    /// The content-state: counting down when `ended` is nil (deepLinkUrl home, as the mobile contract's
    /// example has it), else ended for that reason.
    private func contentState(
        _ stream: StreamSnapshot, _ fitted: VariableTexts, _ texts: LocalizedTexts, role: ParticipantRole?, now: Date,
        viewerCount: Int, ended reason: EndReason?
    ) -> JSONValue {
        var state: [String: JSONValue] = [
            "streamId": .string(stream.id),
            "creatorName": .string(fitted.names),
            "streamTitle": .string(fitted.title),
            "title": .string(fitted.title),
            "viewerCount": .int(max(0, viewerCount)),
            "updatedAt": .int(Self.epochSeconds(now)),
            "scheduledStartAt": .int(Self.epochSeconds(stream.plannedStartAt)),
        ]
        if let role { state["role"] = .string(role.rawValue) }
        if let reason {
            let link = reason.opensStream ? streamLink(stream.id) : homeLink
            state["displayState"] = "ended"
            state["endedReason"] = .string(reason.rawValue)
            state["statusText"] = .string(texts.endStatus(reason))
            state["subtitle"] = .string(texts.endSubtitle(reason))
            state["deepLink"] = .string(link)
            state["deepLinkUrl"] = .string(link)
        } else {
            state["displayState"] = "countdown"
            state["statusText"] = .string(texts.countdownStatus)
            state["subtitle"] = .string(texts.countdownSubtitle)
            state["deepLink"] = .string(streamLink(stream.id))
            state["deepLinkUrl"] = .string(homeLink)
        }
        return .object(state)
    }
}
