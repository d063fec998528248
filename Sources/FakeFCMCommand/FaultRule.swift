import Foundation

/// One rule posted to `/fake/faults`. Exactly one kind per rule:
/// - `{"latencyMs": 50}`: every send waits this long first (0 removes it);
/// - `{"dropConnections": 3}`: the next 3 sends get their connection closed without an answer;
/// - a failure: `status` (400...599) with optional `errorCode`, `message`, `retryAfter` (seconds; sent as an
///   HTTP-date instead with `"retryAfterFormat": "date"`), `violationField` (a `google.rpc.BadRequest` detail naming
///   that field, e.g. `message.token`), limited by any of `token` (matches `message.token` or
///   `apns.live_activity_token`; alone it lasts until cleared), `nextRequests` (that many matching sends) and
///   `forSeconds` (a time window);
/// - `{"tokenLatencyMs": 200}`: every token request waits this long first (0 removes it);
/// - a token endpoint failure: `tokenStatus` (400...599) with optional `errorCode` (the OAuth `error`, default
///   `invalid_grant` below 500, `internal_failure` from 500), `message`, `nextRequests`, `forSeconds`; without a
///   limit it lasts until cleared.
struct FaultRule: Decodable, Sendable {
    var token: String?
    var status: Int?
    var errorCode: String?
    var message: String?
    var retryAfter: Int?
    var retryAfterFormat: String?
    var violationField: String?
    var nextRequests: Int?
    var forSeconds: Double?
    var latencyMs: Int?
    var dropConnections: Int?
    var tokenLatencyMs: Int?
    var tokenStatus: Int?

    enum Kind: Sendable {
        case latency(milliseconds: Int)
        case drop(count: Int)
        case failure(InjectedFailure)
        case tokenLatency(milliseconds: Int)
        case tokenFailure(InjectedFailure)
    }

    /// The rule's kind, or why it makes no sense.
    func kind(now: Date) throws(FaultRuleError) -> Kind {
        let sendFields = [token != nil, status != nil, retryAfter != nil, retryAfterFormat != nil, violationField != nil]
        let limitFields = [errorCode != nil, message != nil, nextRequests != nil, forSeconds != nil]
        let kinds = [latencyMs != nil, dropConnections != nil, tokenLatencyMs != nil, tokenStatus != nil]
        if let latencyMs {
            guard kinds.filter({ $0 }).count == 1, !(sendFields + limitFields).contains(true) else { throw FaultRuleError("latencyMs goes in a rule of its own") }
            return .latency(milliseconds: try Self.latency(latencyMs, name: "latencyMs"))
        }
        if let tokenLatencyMs {
            guard kinds.filter({ $0 }).count == 1, !(sendFields + limitFields).contains(true) else { throw FaultRuleError("tokenLatencyMs goes in a rule of its own") }
            return .tokenLatency(milliseconds: try Self.latency(tokenLatencyMs, name: "tokenLatencyMs"))
        }
        if let dropConnections {
            guard kinds.filter({ $0 }).count == 1, !(sendFields + limitFields).contains(true) else { throw FaultRuleError("dropConnections goes in a rule of its own") }
            guard dropConnections > 0 else { throw FaultRuleError("dropConnections must be positive") }
            return .drop(count: dropConnections)
        }
        try checkLimits()
        if let tokenStatus {
            guard !sendFields.contains(true) else {
                throw FaultRuleError("tokenStatus takes only errorCode, message, nextRequests and forSeconds")
            }
            guard (400...599).contains(tokenStatus) else { throw FaultRuleError("tokenStatus must be 400...599") }
            let code = errorCode ?? (tokenStatus < 500 ? "invalid_grant" : "internal_failure")
            return .tokenFailure(InjectedFailure(
                token: nil, remaining: nextRequests, until: forSeconds.map { now.addingTimeInterval($0) }, status: tokenStatus,
                errorCode: code, message: message ?? (tokenStatus < 500 ? "Invalid JWT Signature." : "Backend Error"),
                retryAfter: nil, retryAfterAsDate: false, violationField: nil))
        }
        guard let status else { throw FaultRuleError("a rule needs latencyMs, dropConnections, tokenLatencyMs, tokenStatus or status") }
        guard (400...599).contains(status) else { throw FaultRuleError("status must be 400...599") }
        guard token != nil || nextRequests != nil || forSeconds != nil else {
            throw FaultRuleError("a status rule needs token, nextRequests or forSeconds")
        }
        if let token, token.isEmpty { throw FaultRuleError("token must not be empty") }
        if let retryAfter, retryAfter < 0 { throw FaultRuleError("retryAfter must not be negative") }
        if let retryAfterFormat {
            guard retryAfterFormat == "seconds" || retryAfterFormat == "date" else { throw FaultRuleError("retryAfterFormat must be seconds or date") }
            guard retryAfter != nil else { throw FaultRuleError("retryAfterFormat needs retryAfter") }
        }
        if let violationField, violationField.isEmpty { throw FaultRuleError("violationField must not be empty") }
        let code = errorCode ?? GoogleErrorBody.defaultErrorCode(for: status)
        return .failure(InjectedFailure(
            token: token, remaining: nextRequests, until: forSeconds.map { now.addingTimeInterval($0) },
            status: status, errorCode: code, message: message ?? GoogleErrorBody.defaultMessage(status: status, errorCode: code),
            retryAfter: retryAfter, retryAfterAsDate: retryAfterFormat == "date", violationField: violationField))
    }

    private func checkLimits() throws(FaultRuleError) {
        if let nextRequests, nextRequests <= 0 { throw FaultRuleError("nextRequests must be positive") }
        if let forSeconds, !(forSeconds > 0) { throw FaultRuleError("forSeconds must be positive") }
    }

    private static func latency(_ milliseconds: Int, name: String) throws(FaultRuleError) -> Int {
        guard (0...60_000).contains(milliseconds) else { throw FaultRuleError("\(name) must be 0...60000") }
        return milliseconds
    }
}

/// A failure rule in force (sends or the token endpoint).
struct InjectedFailure: Sendable, Encodable {
    var token: String?
    var remaining: Int?
    var until: Date?
    let status: Int
    let errorCode: String?
    let message: String
    let retryAfter: Int?
    let retryAfterAsDate: Bool
    let violationField: String?

    func matches(tokens: [String], now: Date) -> Bool {
        if let token, !tokens.contains(token) { return false }
        if let remaining, remaining <= 0 { return false }
        if let until, now >= until { return false }
        return true
    }

    func isSpent(now: Date) -> Bool {
        (remaining.map { $0 <= 0 } ?? false) || (until.map { now >= $0 } ?? false)
    }

    /// The `Retry-After` value: seconds, or the HTTP-date that many seconds after `now`.
    func retryAfterHeader(now: Date) -> String? {
        guard let retryAfter else { return nil }
        guard retryAfterAsDate else { return String(retryAfter) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: now.addingTimeInterval(Double(retryAfter)))
    }
}

/// A fault rule that cannot be applied.
struct FaultRuleError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
