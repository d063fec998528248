import Foundation
import Testing
import TestSupport

/// The verdict and the report line (pure logic, no system).
@Suite struct ChaosResultTests {
    private func result(lost: Int = 0, duplicated: Int = 0, unexpected: Int = 0, bound: Int = 0, checks: [Bool] = [true]) -> ChaosResult {
        let expected: Set<StartKey> = [StartKey(stream: "c1.1", token: "a"), StartKey(stream: "c1.1", token: "b"), StartKey(stream: "c1.2", token: "c")]
        var accepted = Array(expected.sorted { $0.token < $1.token }.dropFirst(lost))
        accepted += Array(repeating: accepted[0], count: duplicated)
        accepted += (0..<unexpected).map { StartKey(stream: "c1.9", token: "x\($0)") }
        return ChaosResult(
            number: 1, title: "a title", counts: StartComparison.compare(expected, accepted), duplicateBound: bound,
            duplicateBoundText: bound == 0 ? "0" : "≤ \(bound) in flight",
            checks: checks.enumerated().map { .init(passed: $0.element, text: "check \($0.offset)") }, details: ["a note"], seconds: 12.345)
    }

    @Test func passesOnlyWithNothingLostOrUnexpectedDuplicatesWithinTheBoundAndEveryCheck() {
        #expect(result().passed)
        #expect(result(duplicated: 2, bound: 2).passed)
        #expect(!result(duplicated: 3, bound: 2).passed)
        #expect(!result(lost: 1).passed)
        #expect(!result(unexpected: 1).passed)
        #expect(!result(checks: [true, false]).passed)
    }

    @Test func failuresNameWhatFailed() {
        #expect(result(lost: 1, checks: [false]).failures == "check 0; lost 1")
        #expect(result(duplicated: 3, bound: 2).failures == "duplicated 3, bound ≤ 2 in flight")
    }

    @Test func rowAndSummaryHaveTheTableShape() {
        let failed = result(lost: 1, checks: [true, false])
        #expect(failed.row == "| 1 | a title | 3 | 2 | 1 | 0 | 0 | 0 | FAIL | 12.3 |")
        #expect(failed.summary == "1. a title: FAIL\n     a note\n   ok  check 0\n   NOT check 1")
    }

    @Test func reportLineIsOneJSONObjectWithTheFieldsRowAndSummary() throws {
        let line = try result(duplicated: 1, bound: 1).reportLine()
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["duplicateBound"] as? String == "≤ 1 in flight")
        #expect(object["passed"] as? Bool == true)
        #expect(object["row"] as? String == result(duplicated: 1, bound: 1).row)
        #expect((object["checks"] as? [[String: Any]])?.first?["text"] as? String == "check 0")
        let decoded = try JSONDecoder().decode(ChaosResult.self, from: Data(line.utf8))
        #expect(decoded == result(duplicated: 1, bound: 1))
    }
}
