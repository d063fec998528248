import Foundation
import JSON
@testable import PushPayloads
import Testing

/// Long and tricky texts: every payload stays valid UTF-8 within APNs' 4 KB, never splits a grapheme, and
/// shortens only what it must.
@Suite struct PayloadSizeTests {
    let builder = Fixtures.builder()

    static let tenKB = 10 * 1024
    static let hardTexts: [String] = [
        String(repeating: "a", count: tenKB),
        String(repeating: "👩‍👩‍👧‍👦", count: tenKB / 25 + 1),
        String(repeating: "🇹🇷🇺🇸🏳️‍🌈", count: tenKB / 20),
        String(repeating: "e\u{301}\u{323}o\u{308}", count: tenKB / 8),
        "a" + String(repeating: "\u{301}", count: tenKB / 2),
        String(repeating: "\u{200F}مرحبا بالعالم שלום עולם ", count: tenKB / 40),
        String(repeating: "\"\\\n\u{1}\t", count: tenKB / 5),
        String(repeating: "Çok güzel bir yayın 🎉 ", count: tenKB / 24),
    ]

    private func payloads(_ stream: StreamSnapshot) throws -> [LiveActivityPayload] {
        [
            try builder.start(stream, role: .creator, language: .tr, now: Fixtures.startNow),
            try builder.update(stream, role: .guest, language: .en, now: Fixtures.startNow),
        ] + (try EndReason.allCases.map { try builder.end(stream, reason: $0, role: .guest, language: .tr, now: Fixtures.startNow) })
    }

    /// Whether `shown` is `original` itself, or whole leading characters of it followed by "…".
    private func isWholeCharacterPrefix(_ shown: String, of original: String) -> Bool {
        if shown == original { return true }
        guard shown.hasSuffix("…") else { return false }
        return Array(original).starts(with: Array(shown.dropLast()))
    }

    /// `value` re-encoded by the same encoder, to measure an inner object's JSON size.
    private func size(of value: Any) -> Int { jsonValue(value).encoded().count }

    private func jsonValue(_ value: Any) -> JSONValue {
        switch value {
        case let string as String: .string(string)
        case let number as Int: .int(number)
        case let object as [String: Any]: .object(object.mapValues(jsonValue))
        case let array as [Any]: .array(array.map(jsonValue))
        default: .null
        }
    }

    @Test(arguments: hardTexts.indices)
    func longTitleFitsAndStaysWhole(index: Int) throws {
        let title = Self.hardTexts[index]
        for payload in try payloads(Fixtures.stream(title: title)) {
            #expect(payload.apsJSON.count <= LiveActivityPayload.maxAPSBytes)
            #expect(String(validating: payload.apsJSON, as: UTF8.self) != nil)
            let parsed = try ParsedAPS(payload)
            #expect(size(of: parsed.contentState) < 4096)
            if payload.event == .start {
                #expect(size(of: parsed.attributes) < 4096)
                let shown = try #require(parsed.attributes["streamTitle"] as? String)
                #expect(isWholeCharacterPrefix(shown, of: title))
                #expect(shown != title)
                #expect(parsed.attributes["creatorName"] as? String == "Selin Kaya • Mert Demir", "short names are kept")
                let body = try #require(parsed.alert["body"] as? String)
                #expect(body.hasPrefix(shown))
            }
            let stateTitle = try #require(parsed.contentState["title"] as? String)
            #expect(isWholeCharacterPrefix(stateTitle, of: title))
            #expect(parsed.contentState["streamTitle"] as? String == stateTitle)
        }
    }

    @Test(arguments: hardTexts.indices)
    func longNamesFitAndStayWhole(index: Int) throws {
        let name = Self.hardTexts[index]
        let guests = (1...40).map { "Konuk \($0) \(name)" }
        let capped = ([name] + guests).map {
            TextFitting.truncate(TextFitting.trimmed($0), toEscapedBytes: PushPayloadBuilder.maxNameBytes)
        }
        let stream = Fixtures.stream(title: "Kısa başlık", creator: name, guests: guests)
        for payload in try payloads(stream) {
            #expect(payload.apsJSON.count <= LiveActivityPayload.maxAPSBytes)
            let parsed = try ParsedAPS(payload)
            #expect(parsed.contentState["title"] as? String == "Kısa başlık", "a short title is kept")
            let shown = try #require(parsed.contentState["creatorName"] as? String).components(separatedBy: " • ")
            #expect(capped[0].utf8.count <= PushPayloadBuilder.maxNameBytes)
            if shown.last == "…" {
                #expect(shown.count >= 3, "the creator and some guests are shown")
                #expect(Array(shown.dropLast()) == Array(capped.prefix(shown.count - 1)))
            } else {
                #expect(shown == capped)
                #expect(capped.joined(separator: " • ").utf8.count < 1000, "only short capped names fit whole")
            }
        }
    }

    @Test(arguments: hardTexts.indices)
    func longTitleAndNamesTogether(index: Int) throws {
        let text = Self.hardTexts[index]
        let stream = Fixtures.stream(title: text, creator: text, guests: Array(repeating: text, count: 30))
        for payload in try payloads(stream) {
            #expect(payload.apsJSON.count <= LiveActivityPayload.maxAPSBytes)
            #expect(String(validating: payload.apsJSON, as: UTF8.self) != nil)
            let parsed = try ParsedAPS(payload)
            let title = try #require(parsed.contentState["title"] as? String)
            #expect(isWholeCharacterPrefix(title, of: text))
        }
    }

    @Test func longestStreamIdStillLeavesRoomForText() throws {
        let id = String(repeating: "ş", count: PushPayloadBuilder.maxStreamIdBytes / 2)
        let text = Self.hardTexts[0]
        let stream = StreamSnapshot(id: id, title: text, plannedStartAt: Fixtures.plannedStart, creatorName: text,
                                    guestNames: Array(repeating: text, count: 20))
        for payload in try payloads(stream) {
            #expect(payload.apsJSON.count <= LiveActivityPayload.maxAPSBytes)
            let state = try ParsedAPS(payload).contentState
            #expect(state["streamId"] as? String == id)
            #expect((state["title"] as? String ?? "").count > 100)
            #expect((state["creatorName"] as? String ?? "").count > 100)
        }
    }

    @Test func ordinaryTitlesAreNotShortened() throws {
        let title = "🇹🇷 Akşam sohbeti — ‏مرحبا‎ & e\u{301}motions 👩‍👩‍👧‍👦 " + String(repeating: "x", count: 300)
        let expected = title.trimmingCharacters(in: .whitespacesAndNewlines)
        for payload in try payloads(Fixtures.stream(title: title)) {
            #expect(try ParsedAPS(payload).contentState["title"] as? String == expected)
        }
    }

    @Test func oneHugeGraphemeBecomesAnEllipsis() throws {
        let zalgo = "a" + String(repeating: "\u{301}", count: 6000)
        #expect(zalgo.count == 1)
        let parsed = try ParsedAPS(try builder.start(Fixtures.stream(title: zalgo), role: .creator, language: .en, now: Fixtures.startNow))
        #expect(parsed.attributes["title"] as? String == "…")
    }
}
