import Foundation

/// One rule posted to `/fake/faults`. Exactly one kind per rule:
/// - `{"latencyMs": 50}`: every send waits this long first (0 removes it);
/// - `{"dropConnections": 3}`: the next 3 sends get their connection closed without an answer;
/// - a failure: `status` (400...599) with optional `errorCode`, `message`, `retryAfter`, limited by any of
///   `token` (matches `message.token` or `apns.live_activity_token`; alone it lasts until cleared),
///   `nextRequests` (that many matching sends) and `forSeconds` (a time window).
struct FaultRule: Decodable, Sendable {
    var token: String?
    var status: Int?
    var errorCode: String?
    var message: String?
    var retryAfter: Int?
    var nextRequests: Int?
    var forSeconds: Double?
    var latencyMs: Int?
    var dropConnections: Int?

    enum Kind: Sendable {
        case latency(milliseconds: Int)
        case drop(count: Int)
        case failure(InjectedFailure)
    }

    /// The rule's kind, or why it makes no sense.
    func kind(now: Date) throws(FaultRuleError) -> Kind {
        let failureFields = [token != nil, status != nil, errorCode != nil, message != nil, retryAfter != nil, nextRequests != nil, forSeconds != nil]
        if let latencyMs {
            guard dropConnections == nil, !failureFields.contains(true) else { throw FaultRuleError("latencyMs goes in a rule of its own") }
            guard (0...60_000).contains(latencyMs) else { throw FaultRuleError("latencyMs must be 0...60000") }
            return .latency(milliseconds: latencyMs)
        }
        if let dropConnections {
            guard !failureFields.contains(true) else { throw FaultRuleError("dropConnections goes in a rule of its own") }
            guard dropConnections > 0 else { throw FaultRuleError("dropConnections must be positive") }
            return .drop(count: dropConnections)
        }
        guard let status else { throw FaultRuleError("a rule needs latencyMs, dropConnections or status") }
        guard (400...599).contains(status) else { throw FaultRuleError("status must be 400...599") }
        guard token != nil || nextRequests != nil || forSeconds != nil else {
            throw FaultRuleError("a status rule needs token, nextRequests or forSeconds")
        }
        if let token, token.isEmpty { throw FaultRuleError("token must not be empty") }
        if let nextRequests, nextRequests <= 0 { throw FaultRuleError("nextRequests must be positive") }
        if let forSeconds, !(forSeconds > 0) { throw FaultRuleError("forSeconds must be positive") }
        if let retryAfter, retryAfter < 0 { throw FaultRuleError("retryAfter must not be negative") }
        let code = errorCode ?? GoogleErrorBody.defaultErrorCode(for: status)
        return .failure(InjectedFailure(
            token: token, remaining: nextRequests, until: forSeconds.map { now.addingTimeInterval($0) },
            status: status, errorCode: code, message: message ?? GoogleErrorBody.defaultMessage(status: status, errorCode: code),
            retryAfter: retryAfter))
    }
}

/// A failure rule in force.
struct InjectedFailure: Sendable, Encodable {
    var token: String?
    var remaining: Int?
    var until: Date?
    let status: Int
    let errorCode: String?
    let message: String
    let retryAfter: Int?

    func matches(tokens: [String], now: Date) -> Bool {
        if let token, !tokens.contains(token) { return false }
        if let remaining, remaining <= 0 { return false }
        if let until, now >= until { return false }
        return true
    }

    func isSpent(now: Date) -> Bool {
        (remaining.map { $0 <= 0 } ?? false) || (until.map { now >= $0 } ?? false)
    }
}

/// A fault rule that cannot be applied.
struct FaultRuleError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
