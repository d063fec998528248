import Foundation

/// One rule posted to a fake's `/fake/faults`. Exactly one kind per rule:
/// - `{"latencyMs": 50}`: every send (FCM), every push, broadcast and channel request (APNs) waits this long first (0
///   removes it);
/// - `{"dropConnections": 3}`: the next 3 of them get their connection closed without an answer (behind nghttpx the
///   APNs client sees a 502);
/// - a failure: `status` (400...599) with optional `retryAfter` (seconds, a `Retry-After` header), limited by any of
///   `token` (alone it lasts until cleared), `nextRequests` (that many matching requests) and `forSeconds` (a time
///   window).
///
/// The fake FCM's failure takes optional `errorCode`, `message`, `retryAfterFormat` (`"date"`: `Retry-After` as an
/// HTTP-date) and `violationField` (a `google.rpc.BadRequest` detail naming that field, e.g. `message.token`); its
/// `token` matches `message.token` or `apns.live_activity_token`. Its token endpoint has `{"tokenLatencyMs": 200}`
/// and failures `tokenStatus` (400...599) with optional `errorCode` (the OAuth `error`, default `invalid_grant`
/// below 500, `internal_failure` from 500), `message`, `nextRequests`, `forSeconds`; without a limit it lasts until
/// cleared.
///
/// The fake APNs' failure needs `reason` (Apple's, e.g. `BadDeviceToken`, `Unregistered`, `TooManyRequests`,
/// `ExpiredProviderToken`, `ChannelNotRegistered`, `CannotCreateChannelConfig`) and takes `timestamp` (410:
/// milliseconds since the epoch, default now) and `endpoint` (`device`, `broadcast` or `channels`; default all
/// three); its `token` is a device token or a channel id. It is answered once the request passed the fake's own
/// checks.
struct FaultRule: Decodable, Sendable {
    var latencyMs: Int?
    var dropConnections: Int?
    var status: Int?
    var retryAfter: Int?
    var token: String?
    var nextRequests: Int?
    var forSeconds: Double?
    var errorCode: String?
    var message: String?
    var retryAfterFormat: String?
    var violationField: String?
    var tokenLatencyMs: Int?
    var tokenStatus: Int?
    var reason: String?
    var timestamp: Int64?
    var endpoint: RequestLog.Kind?

    enum Kind: Sendable {
        /// `tokenEndpoint`: the fake FCM's token endpoint; otherwise every other request of the fake's service.
        case latency(milliseconds: Int, tokenEndpoint: Bool)
        case drop(count: Int)
        case failure(InjectedFailure, tokenEndpoint: Bool)
    }

    /// The rule's kind for `service`, or why it makes no sense.
    func kind(now: Date, service: FakeService) throws(BadRequest) -> Kind {
        let until = forSeconds.map { now.addingTimeInterval($0) }
        switch service {
        case .fcm: return try fcmKind(until: until)
        case .apns: return try apnsKind(until: until)
        }
    }

    private func fcmKind(until: Date?) throws(BadRequest) -> Kind {
        let sendFields = [token != nil, status != nil, retryAfter != nil, retryAfterFormat != nil, violationField != nil]
        let limitFields = [errorCode != nil, message != nil, nextRequests != nil, forSeconds != nil]
        if let single = try single(tokenLatencyMs: tokenLatencyMs, besides: sendFields + limitFields + [tokenStatus != nil]) { return single }
        try checkLimits()
        if let tokenStatus {
            guard !sendFields.contains(true) else {
                throw BadRequest("tokenStatus takes only errorCode, message, nextRequests and forSeconds")
            }
            guard (400...599).contains(tokenStatus) else { throw BadRequest("tokenStatus must be 400...599") }
            return .failure(InjectedFailure(
                remaining: nextRequests, until: until, status: tokenStatus,
                errorCode: errorCode ?? (tokenStatus < 500 ? "invalid_grant" : "internal_failure"),
                message: message ?? (tokenStatus < 500 ? "Invalid JWT Signature." : "Backend Error"), retryAfterAsDate: false), tokenEndpoint: true)
        }
        guard let status else { throw BadRequest("a rule needs latencyMs, dropConnections, tokenLatencyMs, tokenStatus or status") }
        guard (400...599).contains(status) else { throw BadRequest("status must be 400...599") }
        try checkTarget()
        if let retryAfterFormat {
            guard retryAfterFormat == "seconds" || retryAfterFormat == "date" else { throw BadRequest("retryAfterFormat must be seconds or date") }
            guard retryAfter != nil else { throw BadRequest("retryAfterFormat needs retryAfter") }
        }
        if let violationField, violationField.isEmpty { throw BadRequest("violationField must not be empty") }
        let code = errorCode ?? GoogleErrorBody.defaultErrorCode(for: status)
        return .failure(InjectedFailure(
            token: token, remaining: nextRequests, until: until, status: status, retryAfter: retryAfter, errorCode: code,
            message: message ?? GoogleErrorBody.defaultMessage(status: status, errorCode: code), retryAfterAsDate: retryAfterFormat == "date",
            violationField: violationField), tokenEndpoint: false)
    }

    private func apnsKind(until: Date?) throws(BadRequest) -> Kind {
        let failureFields = [status != nil, reason != nil, retryAfter != nil, timestamp != nil, endpoint != nil, token != nil, nextRequests != nil, forSeconds != nil]
        if let single = try single(tokenLatencyMs: nil, besides: failureFields) { return single }
        guard let status, (400...599).contains(status) else { throw BadRequest("a rule needs latencyMs, dropConnections or status (400...599)") }
        guard let reason, !reason.isEmpty else { throw BadRequest("a status rule needs reason (Apple's, e.g. BadDeviceToken)") }
        try checkTarget()
        if let endpoint, ![.device, .broadcast, .channels].contains(endpoint) { throw BadRequest("endpoint must be device, broadcast or channels") }
        try checkLimits()
        if timestamp != nil && status != 410 { throw BadRequest("timestamp goes with status 410") }
        return .failure(InjectedFailure(
            endpoint: endpoint, token: token, remaining: nextRequests, until: until, status: status, retryAfter: retryAfter, reason: reason,
            timestamp: timestamp), tokenEndpoint: false)
    }

    /// The latency or drop rule this is, alone (none of `besides` set); nil when it is none of them.
    private func single(tokenLatencyMs: Int?, besides: [Bool]) throws(BadRequest) -> Kind? {
        let singles = [("latencyMs", latencyMs), ("tokenLatencyMs", tokenLatencyMs), ("dropConnections", dropConnections)].filter { $0.1 != nil }
        guard let (name, value) = singles.first.map({ ($0.0, $0.1 ?? 0) }) else { return nil }
        guard singles.count == 1, !besides.contains(true) else { throw BadRequest("\(name) goes in a rule of its own") }
        if name == "dropConnections" {
            guard value > 0 else { throw BadRequest("dropConnections must be positive") }
            return .drop(count: value)
        }
        guard (0...60_000).contains(value) else { throw BadRequest("\(name) must be 0...60000") }
        return .latency(milliseconds: value, tokenEndpoint: name == "tokenLatencyMs")
    }

    /// A status rule names a token or is limited; its token and `Retry-After` make sense.
    private func checkTarget() throws(BadRequest) {
        guard token != nil || nextRequests != nil || forSeconds != nil else {
            throw BadRequest("a status rule needs token, nextRequests or forSeconds")
        }
        if let token, token.isEmpty { throw BadRequest("token must not be empty") }
        if let retryAfter, retryAfter < 0 { throw BadRequest("retryAfter must not be negative") }
    }

    private func checkLimits() throws(BadRequest) {
        if let nextRequests, nextRequests <= 0 { throw BadRequest("nextRequests must be positive") }
        if let forSeconds, !(forSeconds > 0) { throw BadRequest("forSeconds must be positive") }
    }
}

/// A failure rule in force. The fake FCM's carry `errorCode`, `message`, `retryAfterAsDate` and `violationField`; the
/// fake APNs' `endpoint`, `reason` and `timestamp`.
struct InjectedFailure: Sendable, Encodable {
    var endpoint: RequestLog.Kind?
    var token: String?
    var remaining: Int?
    var until: Date?
    let status: Int
    var retryAfter: Int?
    var errorCode: String?
    var message: String?
    var retryAfterAsDate: Bool?
    var violationField: String?
    var reason: String?
    var timestamp: Int64?

    /// Whether a request to `kind` about `targets` (FCM: the message's tokens; APNs: its device token or channel id)
    /// gets this failure.
    func matches(_ kind: RequestLog.Kind, targets: [String], now: Date) -> Bool {
        if let endpoint, endpoint != kind { return false }
        if let token, !targets.contains(token) { return false }
        return !isSpent(now: now)
    }

    func isSpent(now: Date) -> Bool {
        (remaining.map { $0 <= 0 } ?? false) || (until.map { now >= $0 } ?? false)
    }

    /// The `Retry-After` value: seconds, or the HTTP-date that many seconds after `now`.
    func retryAfterHeader(now: Date) -> String? {
        guard let retryAfter else { return nil }
        guard retryAfterAsDate == true else { return String(retryAfter) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: now.addingTimeInterval(Double(retryAfter)))
    }
}
