import PushPayloads
import Testing

extension GoldenPayloadTests {
    /// A push-to-start to an iOS 18 device of a stream with a broadcast channel (SPEC 12.5): `input-push-channel` = the
    /// channel id instead of `input-push-token`, everything else as the token start.
    @Test(arguments: PayloadLanguage.allCases)
    func startOnChannel(language: PayloadLanguage) throws {
        let payload = try builder.start(Fixtures.stream, role: .creator, language: language, now: Fixtures.startNow, channel: "dHN0LWNoYW5uZWwtMQ==")
        try GoldenFile.check("start-channel.\(language.rawValue).txt", rendered(payload))
    }
}
