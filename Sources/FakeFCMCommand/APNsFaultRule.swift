import Foundation

/// One rule posted to the fake APNs' `/fake/faults`. Exactly one kind per rule:
/// - `{"latencyMs": 50}`: every push, broadcast and channel request waits this long first (0 removes it);
/// - `{"dropConnections": 3}`: the next 3 of them get their connection closed without an answer (behind nghttpx the
///   client sees a 502);
/// - a failure: `status` (400...599) and `reason` (Apple's, e.g. `BadDeviceToken`, `Unregistered`,
///   `TooManyRequests`, `ExpiredProviderToken`, `ChannelNotRegistered`, `CannotCreateChannelConfig`), optional
///   `retryAfter` (seconds, a `Retry-After` header) and `timestamp` (410: milliseconds since the epoch, default now),
///   limited to `endpoint` (`device`, `broadcast` or `channels`; default all three) and by any of `token` (a device
///   token or a channel id; alone it lasts until cleared), `nextRequests` (that many matching requests) and
///   `forSeconds` (a time window). A failure is answered once the request passed the fake's own checks.
struct APNsFaultRule: Decodable, Sendable {
    var latencyMs: Int?
    var dropConnections: Int?
    var status: Int?
    var reason: String?
    var retryAfter: Int?
    var timestamp: Int64?
    var endpoint: RequestLog.Kind?
    var token: String?
    var nextRequests: Int?
    var forSeconds: Double?

    enum Kind: Sendable {
        case latency(milliseconds: Int)
        case drop(count: Int)
        case failure(APNsInjectedFailure)
    }

    /// The rule's kind, or why it makes no sense.
    func kind(now: Date) throws(FaultRuleError) -> Kind {
        let failureFields: [Any?] = [status, reason, retryAfter, timestamp, endpoint, token, nextRequests, forSeconds]
        let hasFailureField = failureFields.contains { $0 != nil }
        if let latencyMs {
            guard dropConnections == nil, !hasFailureField else { throw FaultRuleError("latencyMs goes in a rule of its own") }
            guard (0...60_000).contains(latencyMs) else { throw FaultRuleError("latencyMs must be 0...60000") }
            return .latency(milliseconds: latencyMs)
        }
        if let dropConnections {
            guard !hasFailureField else { throw FaultRuleError("dropConnections goes in a rule of its own") }
            guard dropConnections > 0 else { throw FaultRuleError("dropConnections must be positive") }
            return .drop(count: dropConnections)
        }
        guard let status, (400...599).contains(status) else { throw FaultRuleError("a rule needs latencyMs, dropConnections or status (400...599)") }
        guard let reason, !reason.isEmpty else { throw FaultRuleError("a status rule needs reason (Apple's, e.g. BadDeviceToken)") }
        guard token != nil || nextRequests != nil || forSeconds != nil else {
            throw FaultRuleError("a status rule needs token, nextRequests or forSeconds")
        }
        if let token, token.isEmpty { throw FaultRuleError("token must not be empty") }
        if let endpoint, ![.device, .broadcast, .channels].contains(endpoint) { throw FaultRuleError("endpoint must be device, broadcast or channels") }
        if let nextRequests, nextRequests <= 0 { throw FaultRuleError("nextRequests must be positive") }
        if let forSeconds, !(forSeconds > 0) { throw FaultRuleError("forSeconds must be positive") }
        if let retryAfter, retryAfter < 0 { throw FaultRuleError("retryAfter must not be negative") }
        if timestamp != nil && status != 410 { throw FaultRuleError("timestamp goes with status 410") }
        return .failure(APNsInjectedFailure(
            endpoint: endpoint, token: token, remaining: nextRequests, until: forSeconds.map { now.addingTimeInterval($0) },
            status: status, reason: reason, retryAfter: retryAfter, timestamp: timestamp))
    }
}

/// A failure rule of the fake APNs in force.
struct APNsInjectedFailure: Sendable, Encodable {
    let endpoint: RequestLog.Kind?
    let token: String?
    var remaining: Int?
    let until: Date?
    let status: Int
    let reason: String
    let retryAfter: Int?
    let timestamp: Int64?

    func applies(to kind: RequestLog.Kind, target: String?, now: Date) -> Bool {
        if let endpoint, endpoint != kind { return false }
        if let token, token != target { return false }
        return !isSpent(now: now)
    }

    func isSpent(now: Date) -> Bool {
        (remaining.map { $0 <= 0 } ?? false) || (until.map { now >= $0 } ?? false)
    }
}
