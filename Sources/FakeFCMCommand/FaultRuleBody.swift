import Foundation
import HTTPServer

/// A `POST /fake/faults` body of either fake: one rule object or an array of them, applied all or none.
enum FaultRuleBody {
    /// Decodes the rules and applies them; 400 with the reason when the body is no rule or a rule makes no sense,
    /// else `applied(rules)`.
    static func add<Rule: Decodable>(
        _ body: Data, apply: ([Rule]) throws(FaultRuleError) -> Void, applied: ([Rule]) -> HTTPResponse
    ) -> HTTPResponse {
        let decoder = JSONDecoder()
        let rules: [Rule]
        if let many = try? decoder.decode([Rule].self, from: body) {
            rules = many
        } else if let one = try? decoder.decode(Rule.self, from: body) {
            rules = [one]
        } else {
            return .json(object: ["error": "expected a fault rule object or an array of them"], status: 400)
        }
        do throws(FaultRuleError) {
            try apply(rules)
        } catch {
            return .json(object: ["error": error.reason], status: 400)
        }
        return applied(rules)
    }
}
