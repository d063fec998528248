import Foundation
@testable import PushPayloads
import Testing

/// A stream's first names decide its payloads (`PushPayloadBuilder.decidingNameCount`): a snapshot with only the
/// guests up to that many non-blank names builds the same bytes as one with every guest.
@Suite struct LeadingNamesTests {
    let builder = Fixtures.builder()

    /// Streams with more guests than any payload shows: the shortest names (one byte) are the worst case.
    static let crowds: [StreamSnapshot] = [
        Fixtures.stream(title: "t", creator: "c", guests: Array(repeating: "a", count: 5_000)),
        Fixtures.stream(title: "Büyük final", guests: (1...3_000).map { "Fan \($0)" }),
        Fixtures.stream(title: String(repeating: "Çok uzun başlık ", count: 300), creator: " ", guests: Array(repeating: "é", count: 4_000)),
        Fixtures.stream(title: "gaps", guests: (1...6_000).map { $0 % 3 == 0 ? "b" : ($0 % 3 == 1 ? " " : "") }),
    ]

    /// The shortest leading part of `stream`'s guests whose names decide.
    static func leading(_ stream: StreamSnapshot) -> StreamSnapshot {
        var cut = stream
        cut.guestNames = []
        for name in stream.guestNames where !PushPayloadBuilder.leadingNamesDecide(cut) { cut.guestNames.append(name) }
        return cut
    }

    @Test(arguments: crowds)
    func theLeadingNamesBuildTheSamePayloads(stream: StreamSnapshot) throws {
        let cut = Self.leading(stream)
        #expect(PushPayloadBuilder.leadingNamesDecide(cut))
        #expect(cut.guestNames.count < stream.guestNames.count)
        let (all, first) = (try builder.prepare(stream), try builder.prepare(cut))
        let now = Fixtures.startNow
        for language in PayloadLanguage.allCases {
            for role in ParticipantRole.allCases {
                #expect(try builder.start(first, role: role, language: language, now: now) == builder.start(all, role: role, language: language, now: now))
                #expect(try builder.androidStart(first, role: role, language: language, now: now, seq: 1)
                        == builder.androidStart(all, role: role, language: language, now: now, seq: 1))
            }
            #expect(try builder.update(cut, role: nil, language: language, now: now) == builder.update(stream, role: nil, language: language, now: now))
            #expect(try builder.end(cut, reason: .cancelled, role: nil, language: language, now: now)
                    == builder.end(stream, reason: .cancelled, role: nil, language: language, now: now))
            #expect(try builder.moved(cut, role: nil, language: language, timeZone: nil, now: now)
                    == builder.moved(stream, role: nil, language: language, timeZone: nil, now: now))
            #expect(try builder.androidEnd(first, reason: .cancelled, role: .guest, language: language, now: now, seq: 2)
                    == builder.androidEnd(all, reason: .cancelled, role: .guest, language: language, now: now, seq: 2))
        }
    }

    @Test func blankNamesDoNotCountTowardsTheDecidingNames() {
        let count = PushPayloadBuilder.decidingNameCount
        #expect(PushPayloadBuilder.leadingNamesDecide(Fixtures.stream(title: "t", creator: "c", guests: Array(repeating: "a", count: count - 1))))
        #expect(!PushPayloadBuilder.leadingNamesDecide(Fixtures.stream(title: "t", creator: "c", guests: Array(repeating: "a", count: count - 2))))
        #expect(!PushPayloadBuilder.leadingNamesDecide(Fixtures.stream(title: "t", creator: " ", guests: Array(repeating: " \n", count: 10 * count))))
    }
}
