import Foundation

extension PushPayloadBuilder {
    /// The reminder notification: a localized title, "<title> starts in N minutes" (real minutes left,
    /// rounded up; "starting now" once the planned start has come) with the title capped at
    /// `maxReminderTitleBytes`, and data `type: stream_reminder`, `streamId`, `deepLink` (the stream). It expires at
    /// the planned start (Android: time to live of the seconds left, at least 1) and collapses per stream
    /// (`reminder-<short hash>`; on Android also as `notification.tag`, so a newer reminder replaces a shown one), on the
    /// configured Android channel if any.
    public func reminder(_ stream: StreamSnapshot, language: PayloadLanguage, now: Date) throws(PushPayloadError) -> ReminderNotification {
        let streamId = try checkedStreamId(stream)
        let texts = LocalizedTexts.of(language)
        let title = TextFitting.truncate(displayTitle(stream, texts), toEscapedBytes: Self.maxReminderTitleBytes)
        let collapse = CollapseID.reminder(stream: streamId)
        return ReminderNotification(
            title: texts.reminderTitle,
            body: texts.countdownSentence(title: title, minutesLeft: Self.minutesLeft(until: stream.plannedStartAt, now: now)),
            data: ["type": "stream_reminder", "streamId": streamId, "deepLink": streamLink(streamId)],
            delivery: NotificationDelivery(
                expiresAt: Self.epochSeconds(stream.plannedStartAt),
                timeToLiveSeconds: max(1, Int(stream.plannedStartAt.timeIntervalSince(now).rounded(.up))),
                collapseID: collapse, androidChannelID: settings.reminderAndroidChannelID, androidTag: collapse))
    }
}
