@testable import CountdownStore
import Foundation
import Testing

@Suite struct ProgressOrderTests {
    @Test func startMarksAreWrittenInStreamOrderWhateverTheDictionarysOrder() {
        let planned = Dictionary(uniqueKeysWithValues: (0..<200).map { ("stream-\($0)", Date(timeIntervalSince1970: Double($0))) })
        let rows = ProgressQueries.keyOrdered(planned)
        #expect(rows.map(\.stream) == planned.keys.sorted())
        #expect(rows.allSatisfy { planned[$0.stream] == $0.planned })
    }
}
