import Foundation
import PushPayloads
import Testing

@Suite struct PayloadContentTests {
    let builder = Fixtures.builder()

    private func decode(_ payload: LiveActivityPayload) throws -> DecodedPayload.APS {
        try JSONDecoder().decode(DecodedPayload.self, from: Data(payload.apsJSON)).aps
    }

    @Test func startMatchesTheMobileContract() throws {
        let payload = try builder.start(Fixtures.stream, role: .guest, language: .tr, now: Fixtures.startNow, viewerCount: 128)
        #expect(payload.event == .start)
        #expect(payload.apnsHeaders == ["apns-priority": "10", "apns-expiration": "1776708000"])
        let aps = try decode(payload)
        #expect(aps.event == "start")
        #expect(aps.timestamp == 1_776_705_330)
        #expect(aps.attributesType == "AllmineLiveActivityAttributes")
        #expect(aps.staleDate == 1_776_711_600)
        #expect(aps.inputPushToken == 1)
        #expect(aps.dismissalDate == nil)
        let attributes = try #require(aps.attributes)
        #expect(attributes.streamId == "65f000000000000000000001")
        #expect(attributes.creatorName == "Selin Kaya • Mert Demir • Ayşe Yılmaz")
        #expect(attributes.streamTitle == Fixtures.stream.title)
        #expect(attributes.title == Fixtures.stream.title)
        #expect(attributes.role == "guest")
        #expect(attributes.deepLink == "allmine://live-stream/65f000000000000000000001")
        let state = aps.contentState
        #expect(state.displayState == .countdown)
        #expect(state.scheduledStartAt == 1_776_708_000)
        #expect(state.updatedAt == 1_776_705_330)
        #expect(state.viewerCount == 128)
        #expect(state.creatorName == attributes.creatorName)
        #expect(state.role == "guest")
        #expect(state.statusText == "Yayına kalan süre")
        #expect(state.subtitle == "Yayına katılmak için dokun")
        #expect(state.deepLink == "allmine://live-stream/65f000000000000000000001")
        #expect(state.deepLinkUrl == "allmine://home")
        #expect(state.endedReason == nil)
        #expect(aps.alert?.body == "Akşam Sohbeti: Swift & \"Vapor\" 45 dakika sonra başlıyor")
    }

    @Test func englishAlertAndSingularMinute() throws {
        let oneMinute = Fixtures.plannedStart.addingTimeInterval(-42)
        let payload = try builder.start(Fixtures.stream(title: "Launch"), role: .creator, language: .en, now: oneMinute)
        #expect(try decode(payload).alert?.body == "Launch starts in 1 minute")
        let later = try builder.start(Fixtures.stream(title: "Launch"), role: .creator, language: .en,
                                      now: Fixtures.plannedStart.addingTimeInterval(-3600))
        #expect(try decode(later).alert?.body == "Launch starts in 60 minutes")
        #expect(try decode(later).contentState.statusText == "Starts in")
    }

    @Test func startingNowWhenThePlannedStartHasCome() throws {
        let tr = try builder.start(Fixtures.stream(title: "Yayın"), role: .creator, language: .tr, now: Fixtures.plannedStart)
        #expect(try decode(tr).alert?.body == "Yayın şimdi başlıyor")
        let en = try builder.start(Fixtures.stream(title: "Show"), role: .creator, language: .en,
                                   now: Fixtures.plannedStart.addingTimeInterval(5))
        #expect(try decode(en).alert?.body == "Show is starting now")
    }

    @Test(arguments: [
        (2700.0, 45), (2670.0, 45), (2640.5, 45), (2640.0, 44), (60.001, 2), (60.0, 1), (59.9, 1), (1.0, 1), (0.25, 1),
        (3600.0, 60),
    ])
    func minutesLeftRoundsUp(secondsLeft: Double, minutes: Int) {
        let now = Fixtures.plannedStart.addingTimeInterval(-secondsLeft)
        #expect(PushPayloadBuilder.minutesLeft(until: Fixtures.plannedStart, now: now) == minutes)
    }

    @Test(arguments: [0.0, -0.5, -600.0])
    func noMinutesLeftOnceStarted(secondsLeft: Double) {
        let now = Fixtures.plannedStart.addingTimeInterval(-secondsLeft)
        #expect(PushPayloadBuilder.minutesLeft(until: Fixtures.plannedStart, now: now) == nil)
    }

    @Test func updateCarriesTheNewStartAndStaleDate() throws {
        var stream = Fixtures.stream
        stream.plannedStartAt = Date(timeIntervalSince1970: 1_776_720_000.9)
        let payload = try builder.update(stream, role: nil, language: .en, now: Fixtures.startNow)
        #expect(payload.event == .update)
        #expect(payload.apnsHeaders == ["apns-priority": "10", "apns-expiration": "1776720000"], "expires at the new planned start")
        #expect(try builder.update(stream, role: nil, language: .en, now: Fixtures.startNow, priority: .conserving).apnsHeaders["apns-priority"] == "5")
        let aps = try decode(payload)
        #expect(aps.event == "update")
        #expect(aps.contentState.scheduledStartAt == 1_776_720_000)
        #expect(aps.contentState.displayState == .countdown)
        #expect(aps.contentState.role == nil)
        #expect(aps.staleDate == 1_776_723_600)
        #expect(aps.alert == nil && aps.attributes == nil && aps.inputPushToken == nil)
    }

    @Test(arguments: EndReason.allCases)
    func endLinksAndTextsPerReason(reason: EndReason) throws {
        let now = Date(timeIntervalSince1970: 1_776_709_000)
        let payload = try builder.end(Fixtures.stream, reason: reason, role: .creator, language: .tr, now: now, viewerCount: 7)
        #expect(payload.event == .end)
        #expect(payload.apnsHeaders == ["apns-priority": "10"])
        let aps = try decode(payload)
        #expect(aps.event == "end")
        #expect(aps.dismissalDate == 1_776_709_900)
        #expect(aps.staleDate == nil && aps.alert == nil)
        let state = aps.contentState
        #expect(state.displayState == .ended)
        #expect(state.endedReason?.rawValue == reason.rawValue)
        #expect(state.updatedAt == 1_776_709_000)
        #expect(state.viewerCount == 7)
        let link = reason == .ready || reason == .started ? "allmine://live-stream/65f000000000000000000001" : "allmine://home"
        #expect(state.deepLink == link)
        #expect(state.deepLinkUrl == link)
        let en = try decode(try builder.end(Fixtures.stream, reason: reason, role: nil, language: .en, now: now)).contentState
        #expect(en.statusText != state.statusText)
        #expect(en.subtitle != state.subtitle)
    }

    @Test func statusTextsDifferPerReason() throws {
        for language in PayloadLanguage.allCases {
            let texts = try EndReason.allCases.map {
                try decode(try builder.end(Fixtures.stream, reason: $0, role: nil, language: language, now: Fixtures.startNow))
                    .contentState.statusText ?? ""
            }
            #expect(Set(texts).count == EndReason.allCases.count)
        }
    }

    @Test func reminderTextsAndData() throws {
        let tenMinutes = Fixtures.plannedStart.addingTimeInterval(-600)
        let tr = try builder.reminder(Fixtures.stream(title: "Sohbet"), language: .tr, now: tenMinutes)
        #expect(tr.title == "Yayın hatırlatması")
        #expect(tr.body == "Sohbet 10 dakika sonra başlıyor")
        #expect(tr.data == ["type": "stream_reminder", "streamId": "65f000000000000000000001",
                            "deepLink": "allmine://live-stream/65f000000000000000000001"])
        let en = try builder.reminder(Fixtures.stream(title: "  "), language: .en, now: Fixtures.plannedStart)
        #expect(en.title == "Stream reminder")
        #expect(en.body == "Live stream is starting now")
    }

    @Test func reminderExpiresAtThePlannedStartAndCollapsesPerStream() throws {
        let planned = Int(Fixtures.plannedStart.timeIntervalSince1970)
        let early = try builder.reminder(Fixtures.stream, language: .tr, now: Fixtures.plannedStart.addingTimeInterval(-411.5))
        let collapseID = "reminder-" + CollapseID.shortHash(Fixtures.stream.id)
        #expect(early.delivery == NotificationDelivery(expiresAt: planned, timeToLiveSeconds: 412, collapseID: collapseID, androidTag: collapseID),
                "Android's notification tag is the collapse id: a newer reminder replaces a shown one")
        let late = try builder.reminder(Fixtures.stream, language: .tr, now: Fixtures.plannedStart.addingTimeInterval(30))
        #expect(late.delivery?.timeToLiveSeconds == 1, "at least one second")
        let other = StreamSnapshot(id: String(repeating: "x", count: 128), title: "T", plannedStartAt: Fixtures.plannedStart, creatorName: "C")
        let collapse = try #require(try builder.reminder(other, language: .en, now: Fixtures.startNow).delivery?.collapseID)
        #expect(collapse.utf8.count <= 64 && collapse.hasPrefix("reminder-") && collapse != early.delivery?.collapseID)
        #expect(CollapseID.shortHash("65f000000000000000000001").count == 16)
        #expect(CollapseID.shortHash("") == "cbf29ce484222325", "FNV-1a's offset basis: stable across releases")

        let channeled = Fixtures.builder(PayloadSettings(reminderAndroidChannelID: "stream_reminders"))
        #expect(try channeled.reminder(Fixtures.stream, language: .tr, now: Fixtures.startNow).delivery?.androidChannelID == "stream_reminders")
        #expect(early.delivery?.androidChannelID == nil)
    }

    @Test func reminderTitleIsCapped() throws {
        let long = String(repeating: "ğ", count: 5000)
        let reminder = try builder.reminder(Fixtures.stream(title: long), language: .tr, now: Fixtures.startNow)
        #expect(reminder.body.utf8.count <= PushPayloadBuilder.maxReminderTitleBytes + 40)
        #expect(reminder.body.hasSuffix("… 45 dakika sonra başlıyor"))
    }

    @Test func namesSkipEmptyOnesAndKeepOrder() throws {
        let stream = StreamSnapshot(id: "s1", title: "T", plannedStartAt: Fixtures.plannedStart, creatorName: " Selin ",
                                    guestNames: ["", "Mert", "  ", "Ayşe\n"])
        let aps = try decode(try builder.start(stream, role: .creator, language: .tr, now: Fixtures.startNow))
        #expect(aps.attributes?.creatorName == "Selin • Mert • Ayşe")
        let noCreator = StreamSnapshot(id: "s1", title: "T", plannedStartAt: Fixtures.plannedStart, creatorName: "", guestNames: ["Mert"])
        #expect(try decode(try builder.start(noCreator, role: .guest, language: .tr, now: Fixtures.startNow)).attributes?.creatorName == "Mert")
    }

    @Test func emptyTitleFallsBackToALocalizedOne() throws {
        let aps = try decode(try builder.start(Fixtures.stream(title: " \n"), role: .creator, language: .tr, now: Fixtures.startNow))
        #expect(aps.attributes?.streamTitle == "Canlı yayın")
        #expect(aps.alert?.body == "Canlı yayın 45 dakika sonra başlıyor")
    }

    @Test func settingsChangeTypeSchemeAndDates() throws {
        let custom = Fixtures.builder(PayloadSettings(attributesType: "OtherAttributes", deepLinkScheme: "myapp",
                                                      expireAfterSeconds: 600, endDismissAfterSeconds: 60))
        let start = try decode(try custom.start(Fixtures.stream, role: .creator, language: .en, now: Fixtures.startNow))
        #expect(start.attributesType == "OtherAttributes")
        #expect(start.staleDate == 1_776_708_600)
        #expect(start.attributes?.deepLink == "myapp://live-stream/65f000000000000000000001")
        #expect(start.contentState.deepLinkUrl == "myapp://home")
        let end = try decode(try custom.end(Fixtures.stream, reason: .expired, role: nil, language: .en, now: Fixtures.startNow))
        #expect(end.dismissalDate == 1_776_705_390)
        #expect(end.contentState.deepLink == "myapp://home")
    }

    @Test(arguments: [
        PayloadSettings(attributesType: ""), PayloadSettings(attributesType: "Bad Type"), PayloadSettings(deepLinkScheme: ""),
        PayloadSettings(deepLinkScheme: "1app"), PayloadSettings(deepLinkScheme: "my app"), PayloadSettings(expireAfterSeconds: -1),
        PayloadSettings(endDismissAfterSeconds: 90_000),
    ])
    func invalidSettingsAreRejected(settings: PayloadSettings) {
        #expect(throws: PushPayloadError.self) { try PushPayloadBuilder(settings: settings) }
        do {
            _ = try PushPayloadBuilder(settings: settings)
        } catch {
            #expect(error.code == .invalidSettings)
        }
    }

    @Test func invalidStreamIdsAreRejected() throws {
        for id in ["", String(repeating: "a", count: PushPayloadBuilder.maxStreamIdBytes + 1)] {
            let stream = StreamSnapshot(id: id, title: "T", plannedStartAt: Fixtures.plannedStart, creatorName: "C")
            do {
                _ = try builder.start(stream, role: .creator, language: .tr, now: Fixtures.startNow)
                Issue.record("accepted stream id of \(id.utf8.count) bytes")
            } catch {
                #expect(error.code == .invalidStreamId)
            }
            #expect(throws: PushPayloadError.self) { try builder.reminder(stream, language: .tr, now: Fixtures.startNow) }
        }
    }

    @Test func streamIdIsPercentEncodedInDeepLinks() throws {
        #expect(builder.streamLink("a/b c?ş") == "allmine://live-stream/a%2Fb%20c%3F%C5%9F")
        #expect(builder.streamLink("AZaz09-._~") == "allmine://live-stream/AZaz09-._~")
        let stream = StreamSnapshot(id: "a/b", title: "T", plannedStartAt: Fixtures.plannedStart, creatorName: "C")
        let aps = try decode(try builder.start(stream, role: .creator, language: .tr, now: Fixtures.startNow))
        #expect(aps.attributes?.streamId == "a/b")
        #expect(aps.attributes?.deepLink == "allmine://live-stream/a%2Fb")
    }

    @Test func timesAreIntegersAndHeadersStrings() throws {
        let fractional = StreamSnapshot(id: "s", title: "T", plannedStartAt: Date(timeIntervalSince1970: 1_776_708_000.75),
                                        creatorName: "C")
        let now = Date(timeIntervalSince1970: 1_776_705_330.5)
        let payloads = [
            try builder.start(fractional, role: .creator, language: .tr, now: now),
            try builder.update(fractional, role: .creator, language: .tr, now: now),
            try builder.end(fractional, reason: .started, role: .creator, language: .tr, now: now),
        ]
        for payload in payloads {
            let text = String(decoding: payload.apsJSON, as: UTF8.self)
            #expect(!text.contains("."), "no fractional numbers (and no dots elsewhere in this fixture): \(text)")
            let parsed = try ParsedAPS(payload)
            for key in ["timestamp", "stale-date", "dismissal-date", "input-push-token"] {
                if let value = parsed.aps[key] { #expect(value is Int, "\(key) is \(type(of: value))") }
            }
            for key in ["updatedAt", "scheduledStartAt", "viewerCount"] {
                #expect(parsed.contentState[key] is Int, "\(key)")
            }
            #expect(text.contains("\"timestamp\":1776705330"))
            #expect(text.contains("\"scheduledStartAt\":1776708000"))
        }
        #expect(payloads[0].apnsHeaders["apns-expiration"] == "1776708000")
    }

    @Test func languageResolution() {
        #expect(PayloadLanguage.resolve(deviceLocale: "en_US", userLocale: "tr") == .en)
        #expect(PayloadLanguage.resolve(deviceLocale: "tr-TR", userLocale: "en") == .tr)
        #expect(PayloadLanguage.resolve(deviceLocale: nil, userLocale: "EN") == .en)
        #expect(PayloadLanguage.resolve(deviceLocale: "de_DE", userLocale: "en") == .en)
        #expect(PayloadLanguage.resolve(deviceLocale: "de_DE", userLocale: "fr") == .tr)
        #expect(PayloadLanguage.resolve(deviceLocale: "", userLocale: nil) == .tr)
        #expect(PayloadLanguage.resolve(deviceLocale: "xx", userLocale: nil, fallback: .en) == .en)
        #expect(PayloadLanguage(localeIdentifier: "en-GB@calendar=gregorian") == .en)
        #expect(PayloadLanguage(localeIdentifier: "english") == nil)
    }
}
