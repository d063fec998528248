import Foundation
import PushPayloads
import Testing

/// SPEC 12.2, the long move: the activity ended because its stream moved past its 8-hour life says so, and to when.
@Suite struct MovedPayloadTests {
    let builder = Fixtures.builder()
    /// Moved 9 hours later: 2026-04-21 03:00 UTC, 06:00 in Istanbul.
    var moved: StreamSnapshot {
        var stream = Fixtures.stream
        stream.plannedStartAt = Fixtures.plannedStart.addingTimeInterval(9 * 3600)
        return stream
    }

    func decode(_ payload: LiveActivityPayload) throws -> DecodedPayload.APS {
        try JSONDecoder().decode(DecodedPayload.self, from: Data(payload.apsJSON)).aps
    }

    @Test(arguments: [
        (PayloadLanguage.tr, "Yayının zamanı değişti", "Yeni zamanı: 21 Nisan 06:00"),
        (.en, "The stream has moved", "New time: 21 April, 06:00"),
    ])
    func itEndsWithoutAReasonSayingTheStreamMovedAndToWhen(language: PayloadLanguage, status: String, subtitle: String) throws {
        let istanbul = try #require(TimeZone(identifier: "Europe/Istanbul"))
        let payload = try builder.moved(moved, role: .guest, language: language, timeZone: istanbul, now: Fixtures.startNow)
        #expect(payload.event == .end && payload.apnsHeaders == ["apns-priority": "10"])
        let aps = try decode(payload)
        #expect(aps.event == "end")
        #expect(aps.contentState.displayState == .ended)
        #expect(aps.contentState.endedReason == nil, "none of the four reasons fits: the stream was not cancelled")
        #expect(aps.contentState.statusText == status)
        #expect(aps.contentState.subtitle == subtitle)
        #expect(aps.contentState.scheduledStartAt == Int(moved.plannedStartAt.timeIntervalSince1970))
        #expect(aps.dismissalDate == Int(Fixtures.startNow.timeIntervalSince1970) + 900, "now + END_DISMISS_AFTER_SECONDS: it is seen")
        #expect(aps.contentState.deepLink == "allmine://live-stream/65f000000000000000000001")
        #expect(aps.contentState.deepLinkUrl == aps.contentState.deepLink, "a tap opens the stream at its new time")
        let json = String(decoding: payload.apsJSON, as: UTF8.self)
        #expect(!json.contains("endedReason"))
    }

    @Test func anUnknownTimeZoneShowsUTCAndSaysSo() throws {
        let payload = try builder.moved(moved, role: nil, language: .en, timeZone: nil, now: Fixtures.startNow)
        #expect(try decode(payload).contentState.subtitle == "New time: 21 April, 03:00 UTC")
        let evening = try builder.moved(Fixtures.stream, role: nil, language: .tr, timeZone: TimeZone(identifier: "America/New_York"),
                                        now: Fixtures.startNow)
        #expect(try decode(evening).contentState.subtitle == "Yeni zamanı: 20 Nisan 14:00")
    }
}
