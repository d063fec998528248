import Foundation
import TestSupport

/// One scenario's verdict: the counts, its checks and notes, as `scripts/chaos` prints and stores them.
public struct ChaosResult: Codable, Sendable, Equatable {
    public struct Check: Codable, Sendable, Equatable {
        public var passed: Bool
        public var text: String
    }

    public var number: Int
    public var title: String
    public var expected: Int
    public var accepted: Int
    public var lost: Int
    public var duplicated: Int
    public var unexpected: Int
    public var duplicateBound: String
    public var checks: [Check]
    public var details: [String]
    public var passed: Bool
    public var seconds: Double
    /// Where the logs of a failed scenario were copied.
    public var logs: String?

    /// Passed when nothing was lost or unexpected, the duplicates stay within `duplicateBound`, and every check held.
    public init(number: Int, title: String, counts: StartComparison, duplicateBound: Int, duplicateBoundText: String,
                checks: [Check], details: [String], seconds: Double) {
        self.number = number
        self.title = title
        expected = counts.expected
        accepted = counts.accepted
        lost = counts.lost
        duplicated = counts.duplicated
        unexpected = counts.unexpected
        self.duplicateBound = duplicateBoundText
        self.checks = checks
        self.details = details
        passed = counts.lost == 0 && counts.unexpected == 0 && counts.duplicated <= duplicateBound && checks.allSatisfy(\.passed)
        self.seconds = (seconds * 10).rounded() / 10
    }

    /// The row of the report's markdown table (`| # | scenario | expected | accepted | lost | duplicated | unexpected |
    /// duplicate bound | result | s |`).
    public var row: String {
        "| \(number) | \(title) | \(expected) | \(accepted) | \(lost) | \(duplicated) | \(unexpected) | \(duplicateBound) | "
            + "\(passed ? "pass" : "FAIL") | \(ChaosScenario.fixed(seconds, 1)) |"
    }

    /// The block under the table: the verdict, the notes, then the checks (`ok ` or `NOT`).
    public var summary: String {
        var lines = ["\(number). \(title): \(passed ? "pass" : "FAIL")"]
        lines += details.map { "     " + $0 }
        lines += checks.map { "   \($0.passed ? "ok " : "NOT") \($0.text)" }
        return lines.joined(separator: "\n")
    }

    /// The failed checks, for the test's failure message.
    public var failures: String {
        var reasons = checks.filter { !$0.passed }.map(\.text)
        if lost > 0 { reasons.append("lost \(lost)") }
        if unexpected > 0 { reasons.append("unexpected \(unexpected)") }
        if !passed && reasons.isEmpty { reasons.append("duplicated \(duplicated), bound \(duplicateBound)") }
        return reasons.joined(separator: "; ")
    }

    /// One line of the report file (`COUNTDOWN_CHAOS_REPORT`): the result's fields plus its table `row` and `summary`.
    public func reportLine() throws -> String {
        var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(self)) as? [String: Any] ?? [:]
        object["row"] = row
        object["summary"] = summary
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
