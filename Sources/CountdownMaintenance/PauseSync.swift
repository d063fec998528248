import CountdownStore
import DelayQueue

/// Makes the queue's Redis pause keys (the claim-time check) match the pause state in PostgreSQL (SPEC 10.3). A kind
/// PostgreSQL has no row for is left as Redis has it. Used by the worker's `PauseMirror` and by the reconciler
/// before it rebuilds jobs.
public enum PauseSync {
    /// What to change in Redis: kinds to pause (grouped by reason) and kinds to resume.
    public struct Plan: Equatable, Sendable {
        public var pause: [String: [String]] = [:]
        public var resume: [String] = []
        public var isEmpty: Bool { pause.isEmpty && resume.isEmpty }
    }

    /// The changes that make Redis (`mirrored`: the kinds paused there) match PostgreSQL's `truth`.
    public static func plan(truth: [PauseQueries.Entry], mirrored: Set<String>) -> Plan {
        var plan = Plan()
        for entry in truth.sorted(by: { $0.kind < $1.kind }) {
            if entry.paused && !mirrored.contains(entry.kind) {
                plan.pause[entry.reason, default: []].append(entry.kind)
            } else if !entry.paused && mirrored.contains(entry.kind) {
                plan.resume.append(entry.kind)
            }
        }
        return plan
    }

    /// Applies PostgreSQL's `truth` to the queue; returns what it changed.
    @discardableResult
    public static func apply(_ truth: [PauseQueries.Entry], to queue: any DelayQueue) async throws -> Plan {
        let plan = plan(truth: truth, mirrored: Set(try await queue.pausedKinds().map(\.kind)))
        for (reason, kinds) in plan.pause.sorted(by: { $0.key < $1.key }) { try await queue.pause(kinds: kinds, reason: reason) }
        // An empty list would resume every kind.
        if !plan.resume.isEmpty { try await queue.resume(kinds: plan.resume) }
        return plan
    }

}
