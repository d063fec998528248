import Foundation
import Synchronization

/// The faults in force and the decision for each send. Decisions are made under a lock and never wait in it.
final class FaultInjector: Sendable {
    private struct State: Sendable {
        var latencyMilliseconds = 0
        var dropsLeft = 0
        var failures: [InjectedFailure] = []
        var tokenLatencyMilliseconds = 0
        var tokenFailures: [InjectedFailure] = []
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// Applies rules in order; nothing is applied when any of them is invalid.
    func apply(_ rules: [FaultRule]) throws(FaultRuleError) {
        let at = now()
        var kinds: [FaultRule.Kind] = []
        for (index, rule) in rules.enumerated() {
            do {
                kinds.append(try rule.kind(now: at))
            } catch {
                throw FaultRuleError(rules.count > 1 ? "rule \(index): \(error.reason)" : error.reason)
            }
        }
        state.withLock { state in
            for kind in kinds {
                switch kind {
                case .latency(let milliseconds): state.latencyMilliseconds = milliseconds
                case .drop(let count): state.dropsLeft += count
                case .failure(let failure):
                    // A new rule for a token replaces the old one; token rules are checked before general ones.
                    if let token = failure.token { state.failures.removeAll { $0.token == token } }
                    state.failures.append(failure)
                    state.failures.sort { ($0.token != nil ? 0 : 1) < ($1.token != nil ? 0 : 1) }
                case .tokenLatency(let milliseconds): state.tokenLatencyMilliseconds = milliseconds
                case .tokenFailure(let failure): state.tokenFailures.append(failure)
                }
            }
        }
    }

    func clear() { state.withLock { $0 = State() } }

    /// Added latency for every send, in milliseconds.
    var latencyMilliseconds: Int { state.withLock { $0.latencyMilliseconds } }

    /// Added latency for every token request, in milliseconds.
    var tokenLatencyMilliseconds: Int { state.withLock { $0.tokenLatencyMilliseconds } }

    /// Whether the next send loses its connection (counted down).
    func takeDrop() -> Bool {
        state.withLock { state in
            guard state.dropsLeft > 0 else { return false }
            state.dropsLeft -= 1
            return true
        }
    }

    /// The failure to inject for a valid send with these tokens, counting it against its rule.
    func failure(tokens: [String]) -> InjectedFailure? {
        let at = now()
        return state.withLock { Self.take(from: &$0.failures, tokens: tokens, now: at) }
    }

    /// The failure to answer a token request with, counting it against its rule.
    func tokenFailure() -> InjectedFailure? {
        let at = now()
        return state.withLock { Self.take(from: &$0.tokenFailures, tokens: [], now: at) }
    }

    /// The first rule in `failures` matching `tokens`, counted against; spent rules are removed.
    private static func take(from failures: inout [InjectedFailure], tokens: [String], now: Date) -> InjectedFailure? {
        failures.removeAll { $0.isSpent(now: now) }
        guard let index = failures.firstIndex(where: { $0.matches(tokens: tokens, now: now) }) else { return nil }
        let failure = failures[index]
        if let remaining = failure.remaining { failures[index].remaining = remaining - 1 }
        return failure
    }

    /// The faults in force, as `GET /fake/faults` shows them.
    struct Snapshot: Encodable, Sendable {
        let latencyMs: Int
        let dropConnections: Int
        let failures: [InjectedFailure]
        let tokenLatencyMs: Int
        let tokenFailures: [InjectedFailure]
    }

    var snapshot: Snapshot {
        let at = now()
        return state.withLock { state in
            Snapshot(
                latencyMs: state.latencyMilliseconds, dropConnections: state.dropsLeft, failures: state.failures.filter { !$0.isSpent(now: at) },
                tokenLatencyMs: state.tokenLatencyMilliseconds, tokenFailures: state.tokenFailures.filter { !$0.isSpent(now: at) })
        }
    }
}
