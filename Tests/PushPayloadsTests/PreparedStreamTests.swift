import Foundation
@testable import PushPayloads
import Testing

/// A stream prepared once gives every payload the same bytes as building from the snapshot each time.
@Suite struct PreparedStreamTests {
    let builder = Fixtures.builder()

    static let streams: [StreamSnapshot] = [
        Fixtures.stream,
        Fixtures.stream(title: ""),
        Fixtures.stream(title: "  \n padded title \t", creator: "  Selin  ", guests: [" ", "Mert Demir\n", ""]),
        Fixtures.stream(title: String(repeating: "Çok uzun başlık 🎉 ", count: 400), guests: Array(repeating: "Ayşe Yılmaz", count: 300)),
        Fixtures.stream(title: "e\u{301} ends in a mark e\u{301}", creator: String(repeating: "\"quoted\" ", count: 40)),
    ]

    @Test(arguments: streams)
    func startPayloadsMatchBuildingFromTheSnapshot(stream: StreamSnapshot) throws {
        let prepared = try builder.prepare(stream)
        for role in ParticipantRole.allCases {
            for language in PayloadLanguage.allCases {
                let direct = try builder.start(stream, role: role, language: language, now: Fixtures.startNow, viewerCount: 7)
                let once = try builder.start(prepared, role: role, language: language, now: Fixtures.startNow, viewerCount: 7)
                #expect(once == direct, "\(role) \(language)")
            }
        }
    }

    @Test func preparingChecksTheStreamIDAsTheBuildersDo() {
        let noID = StreamSnapshot(id: "", title: "t", plannedStartAt: Fixtures.plannedStart, creatorName: "c")
        #expect(throws: PushPayloadError.self) { try builder.prepare(noID) }
    }

    @Test func preparedTextsAreTrimmedAndCapped() throws {
        let long = String(repeating: "n", count: 500)
        let prepared = try builder.prepare(Fixtures.stream(title: " title ", creator: " a ", guests: ["", long]))
        #expect(prepared.title == "title")
        #expect(prepared.names.count == 2)
        #expect(prepared.names[0] == "a")
        #expect(prepared.names[1].utf8.count <= PushPayloadBuilder.maxNameBytes && prepared.names[1].hasSuffix("…"))
    }
}
