import Foundation
import Synchronization

/// The fake APNs' faults in force and the decision for each request, under a lock that is never waited in.
final class APNsFaults: Sendable {
    private struct State: Sendable {
        var latencyMs = 0
        var dropConnections = 0
        var failures: [APNsInjectedFailure] = []
    }

    /// `GET /fake/faults`.
    struct Snapshot: Encodable, Sendable {
        let latencyMs: Int
        let dropConnections: Int
        let failures: [APNsInjectedFailure]
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// Applies every rule, or none when one is invalid.
    func apply(_ rules: [APNsFaultRule]) throws(FaultRuleError) {
        let time = now()
        var kinds: [APNsFaultRule.Kind] = []
        for (index, rule) in rules.enumerated() {
            do {
                kinds.append(try rule.kind(now: time))
            } catch {
                throw FaultRuleError(rules.count > 1 ? "rule \(index): \(error.reason)" : error.reason)
            }
        }
        state.withLock { state in
            for kind in kinds {
                switch kind {
                case .latency(let milliseconds): state.latencyMs = milliseconds
                case .drop(let count): state.dropConnections += count
                case .failure(let failure):
                    // Rules for one token come before general ones; a new rule for a token replaces its old one.
                    if let token = failure.token { state.failures.removeAll { $0.token == token && $0.endpoint == failure.endpoint } }
                    state.failures.append(failure)
                    state.failures.sort { ($0.token == nil ? 1 : 0) < ($1.token == nil ? 1 : 0) }
                }
            }
        }
    }

    func clear() { state.withLock { $0 = State() } }

    var latencyMilliseconds: Int { state.withLock { $0.latencyMs } }

    /// Whether this request loses its connection (counted down).
    func takeDrop() -> Bool {
        state.withLock { state in
            guard state.dropConnections > 0 else { return false }
            state.dropConnections -= 1
            return true
        }
    }

    /// The failure for a request to `kind` about `target` (device token or channel id), counted against its rule.
    func failure(for kind: RequestLog.Kind, target: String?) -> APNsInjectedFailure? {
        let time = now()
        return state.withLock { state in
            state.failures.removeAll { $0.isSpent(now: time) }
            guard let index = state.failures.firstIndex(where: { $0.applies(to: kind, target: target, now: time) }) else { return nil }
            state.failures[index].remaining = state.failures[index].remaining.map { $0 - 1 }
            return state.failures[index]
        }
    }

    var snapshot: Snapshot {
        let time = now()
        return state.withLock { Snapshot(latencyMs: $0.latencyMs, dropConnections: $0.dropConnections, failures: $0.failures.filter { !$0.isSpent(now: time) }) }
    }
}
