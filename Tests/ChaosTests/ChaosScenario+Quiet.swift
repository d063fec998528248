import Foundation
import TestSupport

extension ChaosScenario {
    /// Waits until nothing is open for this scenario's streams (`CountdownSystem.openWork`) and no push arrived for
    /// `settle` seconds; when a due second is set, not before half a second past it. On timeout the failure is a
    /// check (saying what was still open) and the answer false. `onPoll` runs on every poll (a scenario watching its
    /// workers).
    @discardableResult
    public func waitQuiet(timeout: Double, settle: Double = 1.5, onPoll: (() async throws -> Void)? = nil) async throws -> Bool {
        if let due { try await waitUntil(due + 0.5) }
        let problems = try await system.waitQuiet(streamPrefix: prefix, tally: tally, timeout: timeout, settle: settle, onPoll: onPoll)
        guard problems.isEmpty else {
            check(false, "quiet within \(Int(timeout.rounded()))s (still: \(problems.joined(separator: ", ")))")
            return false
        }
        return true
    }
}
