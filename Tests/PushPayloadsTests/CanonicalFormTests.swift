import Foundation
import JSON
import PushPayloads
import Testing

/// The builders write their JSON directly, keys in sorted order by hand: parsing a payload and encoding it again
/// (`JSONValue.encoded()` sorts keys and writes compact JSON) must give the same bytes, for every shape.
@Suite struct CanonicalFormTests {
    let builder = Fixtures.builder()
    static let longTitle = String(repeating: "Çok uzun bir başlık \"tırnaklı\" \\ ", count: 200)
    static let streams = [
        Fixtures.stream,
        Fixtures.stream(title: ""),
        Fixtures.stream(title: longTitle, guests: Array(repeating: "Konuk Adı Soyadı", count: 300)),
        Fixtures.stream(title: "tab\tnew\nline\u{1}", creator: "", guests: []),
    ]

    private func expectCanonical(_ payload: LiveActivityPayload, sourceLocation: SourceLocation = #_sourceLocation) {
        let parsed = JSONValue.parse(payload.apsJSON)
        #expect(parsed != nil, "not JSON: \(String(decoding: payload.apsJSON, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(parsed?.encoded() == payload.apsJSON, "not canonical: \(String(decoding: payload.apsJSON, as: UTF8.self))",
                sourceLocation: sourceLocation)
        #expect(payload.apsJSON.count <= LiveActivityPayload.maxAPSBytes, sourceLocation: sourceLocation)
    }

    @Test(arguments: streams.indices, PayloadLanguage.allCases)
    func startAndUpdate(stream: Int, language: PayloadLanguage) throws {
        let snapshot = Self.streams[stream]
        for role in ParticipantRole.allCases {
            expectCanonical(try builder.start(snapshot, role: role, language: language, now: Fixtures.startNow, viewerCount: 12))
        }
        for role in [nil] + ParticipantRole.allCases.map(Optional.some) {
            expectCanonical(try builder.update(snapshot, role: role, language: language, now: Fixtures.startNow, viewerCount: -3))
        }
    }

    @Test(arguments: streams.indices, EndReason.allCases)
    func end(stream: Int, reason: EndReason) throws {
        for role in [nil, ParticipantRole.creator] {
            for dismissNow in [false, true] {
                expectCanonical(try builder.end(Self.streams[stream], reason: reason, role: role, language: .en,
                                                now: Fixtures.startNow, viewerCount: 1_000_000, dismissNow: dismissNow))
            }
        }
    }
}
