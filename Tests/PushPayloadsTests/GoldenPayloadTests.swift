import Foundation
import PushPayloads
import Testing

@Suite struct GoldenPayloadTests {
    let builder = Fixtures.builder()

    /// Headers as sorted `name: value` lines, a blank line, then the `aps` JSON exactly as sent.
    func rendered(_ payload: LiveActivityPayload) -> [UInt8] {
        let headers = payload.apnsHeaders.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\n" }.joined()
        return Array("event: \(payload.event.rawValue)\n\(headers)\n".utf8) + payload.apsJSON + Array("\n".utf8)
    }

    @Test(arguments: PayloadLanguage.allCases)
    func start(language: PayloadLanguage) throws {
        let payload = try builder.start(Fixtures.stream, role: .creator, language: language, now: Fixtures.startNow)
        try GoldenFile.check("start.\(language.rawValue).txt", rendered(payload))
    }

    @Test(arguments: PayloadLanguage.allCases)
    func update(language: PayloadLanguage) throws {
        var stream = Fixtures.stream
        stream.plannedStartAt = Date(timeIntervalSince1970: 1_776_711_600)
        let payload = try builder.update(stream, role: .guest, language: language, now: Date(timeIntervalSince1970: 1_776_705_400),
                                         viewerCount: 128)
        try GoldenFile.check("update.\(language.rawValue).txt", rendered(payload))
    }

    @Test(arguments: PayloadLanguage.allCases, EndReason.allCases)
    func end(language: PayloadLanguage, reason: EndReason) throws {
        let payload = try builder.end(Fixtures.stream, reason: reason, role: .creator, language: language,
                                      now: Date(timeIntervalSince1970: 1_776_708_120))
        try GoldenFile.check("end-\(reason.rawValue).\(language.rawValue).txt", rendered(payload))
    }

    /// The Android countdown's data messages (SPEC 10.4): `{"android":{…},"data":{…}}`, sorted keys.
    @Test(arguments: PayloadLanguage.allCases)
    func androidStart(language: PayloadLanguage) throws {
        let message = try builder.androidStart(builder.prepare(Fixtures.stream), role: .creator, language: language, now: Fixtures.startNow,
                                               seq: 1)
        try GoldenFile.check("android-start.\(language.rawValue).json", message.json.encoded() + Array("\n".utf8))
    }

    @Test(arguments: PayloadLanguage.allCases)
    func androidUpdate(language: PayloadLanguage) throws {
        var stream = Fixtures.stream
        stream.plannedStartAt = Date(timeIntervalSince1970: 1_776_711_600)
        let message = try builder.androidUpdate(builder.prepare(stream), role: .guest, language: language,
                                                now: Date(timeIntervalSince1970: 1_776_705_400), seq: 2, shown: Fixtures.plannedStart,
                                                viewerCount: 128)
        try GoldenFile.check("android-update.\(language.rawValue).json", message.json.encoded() + Array("\n".utf8))
    }

    @Test(arguments: PayloadLanguage.allCases, EndReason.allCases)
    func androidEnd(language: PayloadLanguage, reason: EndReason) throws {
        let message = try builder.androidEnd(builder.prepare(Fixtures.stream), reason: reason, role: .creator, language: language,
                                             now: Date(timeIntervalSince1970: 1_776_708_120), seq: 3)
        try GoldenFile.check("android-end-\(reason.rawValue).\(language.rawValue).json", message.json.encoded() + Array("\n".utf8))
    }

    @Test(arguments: PayloadLanguage.allCases)
    func reminder(language: PayloadLanguage) throws {
        let reminder = try builder.reminder(Fixtures.stream, language: language, now: Date(timeIntervalSince1970: 1_776_707_400))
        try GoldenFile.check("reminder.\(language.rawValue).json", reminder.json.encoded() + Array("\n".utf8))
    }
}
