import Foundation
import JSON
import PushPayloads
import Testing

/// Every rule of SPEC 10.4's Android countdown message, one test each.
@Suite struct AndroidCountdownPayloadTests {
    let builder = Fixtures.builder()
    var prepared: PreparedStream { try! builder.prepare(Fixtures.stream) }
    static let common: Set<String> = [
        "type", "event", "streamId", "scheduledStartAt", "timestamp", "title", "body", "streamTitle", "creatorName", "role", "deepLink",
        "viewerCount", "seq",
    ]

    @Test func aStartCarriesTheCommonKeysAndStaleAtAsStrings() throws {
        let message = try builder.androidStart(prepared, role: .creator, language: .en, now: Fixtures.startNow, seq: 1, viewerCount: 12)
        #expect(Set(message.data.keys) == Self.common.union(["staleAt"]))
        #expect(message.event == .start)
        #expect(message.data["type"] == "stream_countdown")
        #expect(message.data["event"] == "start")
        #expect(message.data["scheduledStartAt"] == "1776708000")
        #expect(message.data["timestamp"] == "1776705330")
        #expect(message.data["staleAt"] == "1776711600", "planned start + EXPIRE_AFTER_SECONDS")
        #expect(message.data["viewerCount"] == "12")
        #expect(message.data["seq"] == "1")
        #expect(message.data["role"] == "creator")
        #expect(message.data["creatorName"] == "Selin Kaya • Mert Demir • Ayşe Yılmaz")
        #expect(message.data["deepLink"] == "allmine://live-stream/65f000000000000000000001")
    }

    @Test func startTextsAreTheIOSAlertsInTheTargetsLanguage() throws {
        let ios = try ParsedAPS(builder.start(Fixtures.stream, role: .guest, language: .tr, now: Fixtures.startNow)).alert
        let android = try builder.androidStart(prepared, role: .guest, language: .tr, now: Fixtures.startNow, seq: 1)
        #expect(android.data["title"] == ios["title"] as? String)
        #expect(android.data["body"] == ios["body"] as? String)
        #expect(android.data["body"] == "Akşam Sohbeti: Swift & \"Vapor\" 45 dakika sonra başlıyor")
        let english = try builder.androidStart(prepared, role: .guest, language: .en, now: Fixtures.startNow, seq: 1)
        #expect(english.data["body"] == "Akşam Sohbeti: Swift & \"Vapor\" starts in 45 minutes")
    }

    @Test func startIsHighWithTheSecondsToTheStartAsTTLAndAPerStreamCollapseKey() throws {
        let message = try builder.androidStart(prepared, role: .creator, language: .en, now: Fixtures.startNow, seq: 1)
        #expect(message.priority == .high)
        #expect(message.ttlSeconds == 2670)
        #expect(message.ttl == "2670s")
        #expect(message.collapseKey == "countdown-87f2b0179c856f65")
        #expect(message.collapseKey == CollapseID.countdown(stream: Fixtures.stream.id))
        let late = try builder.androidStart(prepared, role: .creator, language: .en, now: Fixtures.plannedStart.addingTimeInterval(30), seq: 1)
        #expect(late.ttlSeconds == 1, "at least one second")
        var far = Fixtures.stream
        far.plannedStartAt = Fixtures.startNow.addingTimeInterval(60 * 86_400)
        let capped = try builder.androidStart(builder.prepare(far), role: .creator, language: .en, now: Fixtures.startNow, seq: 1)
        #expect(capped.ttlSeconds == 2_419_200, "FCM keeps a message at most 4 weeks")
    }

    @Test func collapseKeysAreShortStableAndPerStream() {
        let key = CollapseID.countdown(stream: String(repeating: "x", count: 128))
        #expect(key.utf8.count == 26)
        #expect(key.hasPrefix("countdown-"))
        #expect(CollapseID.countdown(stream: "a") != CollapseID.countdown(stream: "b"))
        #expect(CollapseID.countdown(stream: "a") != CollapseID.reminder(stream: "a"))
    }

    @Test func anUpdateCarriesTheNewStartWithTheSameTTLRuleAndCollapseKey() throws {
        var stream = Fixtures.stream
        stream.plannedStartAt = Fixtures.plannedStart.addingTimeInterval(3600)
        let message = try builder.androidUpdate(builder.prepare(stream), role: nil, language: .en, now: Fixtures.startNow, seq: 4,
                                                shown: Fixtures.plannedStart)
        #expect(message.event == .update)
        #expect(message.data["event"] == "update")
        #expect(message.data["scheduledStartAt"] == "1776711600")
        #expect(message.data["staleAt"] == "1776715200")
        #expect(message.data["seq"] == "4")
        #expect(message.data["role"] == nil, "no role when the device's user is unknown")
        #expect(message.ttlSeconds == 2670 + 3600)
        #expect(message.collapseKey == CollapseID.countdown(stream: stream.id))
    }

    @Test(arguments: EndReason.allCases)
    func anEndCarriesItsReasonsTextsAndLinkWithoutCollapseKey(reason: EndReason) throws {
        let now = Date(timeIntervalSince1970: 1_776_708_120)
        let message = try builder.androidEnd(prepared, reason: reason, role: .guest, language: .tr, now: now, seq: 3)
        #expect(Set(message.data.keys) == Self.common.union(["endedReason", "dismissAt"]))
        #expect(message.event == .end)
        #expect(message.data["endedReason"] == reason.rawValue)
        let state = try ParsedAPS(builder.end(Fixtures.stream, reason: reason, role: .guest, language: .tr, now: now)).contentState
        #expect(message.data["title"] == state["statusText"] as? String)
        #expect(message.data["body"] == state["subtitle"] as? String)
        #expect(message.data["deepLink"] == state["deepLink"] as? String)
        #expect(message.data["deepLink"] == (reason.opensStream ? "allmine://live-stream/65f000000000000000000001" : "allmine://home"))
        #expect(message.data["dismissAt"] == "1776709020", "now + END_DISMISS_AFTER_SECONDS")
        #expect(message.priority == .high)
        #expect(message.ttlSeconds == 3480, "until the countdown's staleAt (planned start + EXPIRE_AFTER_SECONDS), longer than END_DISMISS_AFTER_SECONDS")
        #expect(message.collapseKey == nil, "a device keeps only 4 collapse keys: an end must never be collapsed")
    }

    /// SPEC 12.2: an end reaches a phone that was offline until its countdown would have gone stale.
    @Test(arguments: [
        (startIn: 1800, dismiss: 900, expected: 1800 + 3600),
        (startIn: -3000, dismiss: 900, expected: 900),
        (startIn: -3600, dismiss: 0, expected: 1),
        (startIn: 40 * 86_400, dismiss: 900, expected: 28 * 86_400),
    ])
    func anEndLivesUntilTheCountdownsStaleAt(startIn: Int, dismiss: Int, expected: Int) throws {
        let now = Fixtures.startNow
        let planned = now.addingTimeInterval(TimeInterval(startIn))
        #expect(AndroidCountdownMessage.endTTLSeconds(endDismissAfterSeconds: dismiss, plannedStart: planned, expireAfterSeconds: 3600, now: now)
            == expected)
        var stream = Fixtures.stream
        stream.plannedStartAt = planned
        let builder = Fixtures.builder(PayloadSettings(expireAfterSeconds: 3600, endDismissAfterSeconds: dismiss))
        for dismissNow in [false, true] {
            let end = try builder.androidEnd(builder.prepare(stream), reason: .cancelled, role: nil, language: .en, now: now, seq: 2,
                                             dismissNow: dismissNow)
            #expect(end.ttlSeconds == expected)
        }
    }

    @Test func aTakeoverEndIsDismissedAtOnce() throws {
        let now = Date(timeIntervalSince1970: 1_776_708_120)
        let message = try builder.androidEnd(prepared, reason: .cancelled, role: nil, language: .en, now: now, seq: 2, dismissNow: true)
        #expect(message.data["dismissAt"] == "1776708120")
        #expect(message.ttlSeconds == 3480, "still delivered to a phone back online before the countdown's staleAt")
        let immediate = Fixtures.builder(PayloadSettings(endDismissAfterSeconds: 0))
        let zero = try immediate.androidEnd(immediate.prepare(Fixtures.stream), reason: .ready, role: nil, language: .en,
                                            now: now.addingTimeInterval(7200), seq: 2)
        #expect(zero.ttlSeconds == 1, "a ttl of 0 would be now or never")
    }

    @Test func everyValueIsAStringAndIntegersAreDecimal() throws {
        let messages = try [
            builder.androidStart(prepared, role: .creator, language: .en, now: Fixtures.startNow, seq: 1, viewerCount: -5),
            builder.androidUpdate(prepared, role: .creator, language: .en, now: Fixtures.startNow, seq: 2, shown: nil),
            builder.androidEnd(prepared, reason: .started, role: .creator, language: .en, now: Fixtures.startNow, seq: 3),
        ]
        for message in messages {
            let object = try #require(JSONValue.parse(JSONValue.object(message.data.mapValues { .string($0) }).encoded())?.object)
            #expect(object.values.allSatisfy { $0.string != nil })
            for key in ["viewerCount", "scheduledStartAt", "timestamp", "seq", "staleAt", "dismissAt"] {
                guard let value = message.data[key] else { continue }
                #expect(!value.isEmpty && value.allSatisfy { $0.isASCII && $0.isNumber }, "\(key)=\(value)")
            }
        }
        #expect(messages[0].data["viewerCount"] == "0")
    }

    @Test func longTitlesAndNamesAreCutOnCharacterBoundariesToFitTheMessage() throws {
        let title = String(repeating: "Yayın 🇹🇷👩‍👩‍👧 ", count: 400)
        let guests = (1...60).map { "Konuk \($0) " + String(repeating: "ş", count: 40) }
        let stream = Fixtures.stream(title: title, guests: guests)
        let prepared = try builder.prepare(stream)
        let messages = try [
            builder.androidStart(prepared, role: .guest, language: .tr, now: Fixtures.startNow, seq: 1),
            builder.androidUpdate(prepared, role: .guest, language: .tr, now: Fixtures.startNow, seq: 2, shown: nil),
            builder.androidEnd(prepared, reason: .cancelled, role: .guest, language: .tr, now: Fixtures.startNow, seq: 3),
        ]
        for message in messages {
            #expect(AndroidCountdownMessage.dataJSON(message.data).count <= AndroidCountdownMessage.maxDataBytes)
            let shown = try #require(message.data["streamTitle"])
            #expect(shown.hasSuffix("…") && shown.count < title.count)
            #expect(title.hasPrefix(String(shown.dropLast())), "whole characters of the title, flags and families kept whole")
            #expect(shown.unicodeScalars.allSatisfy { $0 != "\u{FFFD}" })
            let names = try #require(message.data["creatorName"])
            #expect(names.hasPrefix("Selin Kaya • Konuk 1 ") && names.hasSuffix(" • …"))
        }
        #expect(messages[0].data["body"]?.contains(try #require(messages[0].data["streamTitle"])) == true)
    }

    @Test func anEmptyTitleShowsTheLanguagesLiveStream() throws {
        let message = try builder.androidStart(builder.prepare(Fixtures.stream(title: "  ")), role: .creator, language: .en,
                                               now: Fixtures.startNow, seq: 1)
        #expect(message.data["streamTitle"] == "Live stream")
    }

    @Test func theJSONFormHoldsTheAndroidOptionsAndData() throws {
        let message = try builder.androidEnd(prepared, reason: .ready, role: .creator, language: .en, now: Fixtures.startNow, seq: 9)
        let json = message.json
        #expect(json["android"]?.object == ["priority": .string("HIGH"), "ttl": .string("6270s")])
        #expect(json["data"]?["seq"]?.string == "9")
    }
}
