import Foundation
import Synchronization

/// A fake's faults in force and the decision for each request, under a lock that is never waited in. The fake FCM's
/// token endpoint has faults of its own, apart from its sends.
final class FaultInjector: Sendable {
    /// The latency, drops and failures of one set of endpoints.
    private struct Lane: Sendable {
        var latencyMs = 0
        var dropConnections = 0
        var failures: [InjectedFailure] = []

        mutating func add(_ failure: InjectedFailure) {
            // A new rule for a token replaces its old one; rules for one token come before general ones.
            if let token = failure.token { failures.removeAll { $0.token == token && $0.endpoint == failure.endpoint } }
            failures.append(failure)
            failures.sort { ($0.token == nil ? 1 : 0) < ($1.token == nil ? 1 : 0) }
        }

        /// The first failure for the request, counted against its rule; spent rules are removed.
        mutating func take(_ kind: RequestLog.Kind, targets: [String], now: Date) -> InjectedFailure? {
            failures.removeAll { $0.isSpent(now: now) }
            guard let index = failures.firstIndex(where: { $0.matches(kind, targets: targets, now: now) }) else { return nil }
            failures[index].remaining = failures[index].remaining.map { $0 - 1 }
            return failures[index]
        }
    }

    private struct State: Sendable {
        var requests = Lane()
        /// The fake FCM's token endpoint.
        var token = Lane()
    }

    /// The faults in force, as `GET /fake/faults` shows them; the token endpoint's only for the fake FCM.
    struct Snapshot: Encodable, Sendable {
        let latencyMs: Int
        let dropConnections: Int
        let failures: [InjectedFailure]
        let tokenLatencyMs: Int?
        let tokenFailures: [InjectedFailure]?
    }

    let service: FakeService
    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(service: FakeService, now: @escaping @Sendable () -> Date) {
        self.service = service
        self.now = now
    }

    /// Applies every rule in order, or none when one of them is invalid.
    func apply(_ rules: [FaultRule]) throws(BadRequest) {
        let time = now()
        var kinds: [FaultRule.Kind] = []
        for (index, rule) in rules.enumerated() {
            do {
                kinds.append(try rule.kind(now: time, service: service))
            } catch {
                throw BadRequest(rules.count > 1 ? "rule \(index): \(error.reason)" : error.reason)
            }
        }
        state.withLock { state in
            for kind in kinds {
                switch kind {
                case .latency(let milliseconds, tokenEndpoint: false): state.requests.latencyMs = milliseconds
                case .latency(let milliseconds, tokenEndpoint: true): state.token.latencyMs = milliseconds
                case .drop(let count): state.requests.dropConnections += count
                case .failure(let failure, tokenEndpoint: false): state.requests.add(failure)
                case .failure(let failure, tokenEndpoint: true): state.token.add(failure)
                }
            }
        }
    }

    func clear() { state.withLock { $0 = State() } }

    /// Added latency, in milliseconds, for a request to `kind` (`.token`: the fake FCM's token endpoint).
    func latencyMilliseconds(_ kind: RequestLog.Kind) -> Int {
        state.withLock { kind == .token ? $0.token.latencyMs : $0.requests.latencyMs }
    }

    /// Whether this request loses its connection (counted down).
    func takeDrop() -> Bool {
        state.withLock { state in
            guard state.requests.dropConnections > 0 else { return false }
            state.requests.dropConnections -= 1
            return true
        }
    }

    /// The failure for a request to `kind` about `targets` (FCM: the message's tokens; APNs: the device token or
    /// channel id), counted against its rule.
    func failure(_ kind: RequestLog.Kind, targets: [String] = []) -> InjectedFailure? {
        let time = now()
        return state.withLock { state in
            kind == .token ? state.token.take(kind, targets: targets, now: time) : state.requests.take(kind, targets: targets, now: time)
        }
    }

    var snapshot: Snapshot {
        let time = now()
        let fcm = service == .fcm
        return state.withLock { state in
            Snapshot(
                latencyMs: state.requests.latencyMs, dropConnections: state.requests.dropConnections,
                failures: state.requests.failures.filter { !$0.isSpent(now: time) }, tokenLatencyMs: fcm ? state.token.latencyMs : nil,
                tokenFailures: fcm ? state.token.failures.filter { !$0.isSpent(now: time) } : nil)
        }
    }
}
