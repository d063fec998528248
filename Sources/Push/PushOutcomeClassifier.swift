import Foundation
import HTTPClient
import HTTPTypes
import JSON
import Telemetry

/// Turns a push service's answer (status, headers, body) or a transport failure into a `PushResult`. Pure: no I/O.
public enum PushOutcomeClassifier {
    /// A classified answer, or a request to refresh credentials once and send again.
    public enum Verdict: Sendable, Equatable {
        case result(PushResult)
        /// The access / provider token was refused as expired or invalid (FCM 401, APNs `ExpiredProviderToken`).
        case refreshCredentials(reason: String)
    }

    /// The status of an FCM answer that may call the access token expired (`UNAUTHENTICATED`).
    static let fcmRefreshStatus = 401
    /// The status of an APNs answer that may call the provider token expired (`ExpiredProviderToken`).
    static let apnsRefreshStatus = 403

    /// Classifies an FCM HTTP v1 `messages:send` answer.
    public static func fcm(status: Int, headers: HTTPHeaders, body: [UInt8], now: Date) -> Verdict {
        if (200..<300).contains(status) {
            return .result(.accepted(messageName: fcmMessageName(body)))
        }
        let error = FCMErrorAnswer(status: status, body: body)
        let retryAfter = { RetryAfter.parse(headers["Retry-After"], now: now) }
        if error.errorCode == "THIRD_PARTY_AUTH_ERROR" { return .result(.configurationError(reason: error.summary)) }
        if error.errorCode == "UNREGISTERED" {
            return .result(.tokenRefused(TokenRefusal(token: .fcm, reason: "UNREGISTERED", suspect: TokenRefusal.fcmProject,
                                                      misconfigurationShaped: false)))
        }
        switch status {
        case 400:
            if let token = error.blamedToken {
                return .result(.tokenRefused(TokenRefusal(
                    token: token, reason: "INVALID_ARGUMENT",
                    suspect: token == .fcm ? "the app's FCM registration (devices.fcm_token)" : "the app's Live Activity token registration",
                    misconfigurationShaped: false)))
            }
            return .result(.rejected(reason: error.summary))
        case fcmRefreshStatus:
            return .refreshCredentials(reason: error.summary)
        case 403 where error.errorCode == "SENDER_ID_MISMATCH":
            // The token belongs to another Firebase project: one device's stale token, or every token when the
            // worker's project is wrong.
            return .result(.tokenRefused(TokenRefusal(token: .fcm, reason: "SENDER_ID_MISMATCH", suspect: TokenRefusal.fcmProject,
                                                      misconfigurationShaped: true)))
        case 403, 404:
            // Without UNREGISTERED a 404 means a wrong project or URL, not a dead token; a 403 means missing permission.
            return .result(.configurationError(reason: error.summary))
        case 429:
            return .result(.retryable(after: retryAfter(), reason: "QUOTA_EXCEEDED"))
        case 408, 500..<600:
            return .result(.retryable(after: retryAfter(), reason: error.errorCode ?? error.status ?? "HTTP \(status)"))
        default:
            return .result(.rejected(reason: error.summary))
        }
    }

    /// The `name` of an FCM success answer (`{"name": "projects/…/messages/…"}`), nil when it has none or it is
    /// not a string. Every accepted push passes here, so the body is read by the project's strict JSON parser;
    /// what it refuses (not JSON, a repeated key, another encoding, a number beyond `Double`) goes to Foundation's
    /// decoder as before, so the answer is the same for every body.
    static func fcmMessageName(_ body: [UInt8]) -> String? {
        if let name = plainNameMember(body) { return name }
        if let answer = JSONValue.parse(body) { return answer["name"]?.string }
        return (try? JSONDecoder().decode(FCMSuccess.self, from: Data(body)))?.name
    }

    /// The answer FCM gives to almost every push, `{"name": "…"}` with no escape in the value, read without
    /// building a tree; nil for anything else (which the parser then reads).
    static func plainNameMember(_ body: [UInt8]) -> String? {
        var index = 0
        func skipSpace() {
            while index < body.count, body[index] == 0x20 || body[index] == 0x0A || body[index] == 0x0D || body[index] == 0x09 { index += 1 }
        }
        func take(_ expected: StaticString) -> Bool {
            let bytes = UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
            guard body.count - index >= bytes.count, body[index..<index + bytes.count].elementsEqual(bytes) else { return false }
            index += bytes.count
            return true
        }
        skipSpace()
        guard take("{") else { return nil }
        skipSpace()
        guard take("\"name\"") else { return nil }
        skipSpace()
        guard take(":") else { return nil }
        skipSpace()
        guard take("\"") else { return nil }
        let start = index
        while index < body.count, body[index] != 0x22 {
            guard body[index] >= 0x20, body[index] != 0x5C else { return nil }
            index += 1
        }
        guard index < body.count else { return nil }
        let end = index
        index += 1
        skipSpace()
        guard take("}") else { return nil }
        skipSpace()
        guard index == body.count else { return nil }
        return String(validating: body[start..<end], as: UTF8.self)
    }

    /// Classifies an APNs answer (`reason` from the JSON body).
    public static func apns(status: Int, headers: HTTPHeaders, body: [UInt8], now: Date) -> Verdict {
        if status == 200 { return .result(.accepted(messageName: headers["apns-id"])) }
        let reason = (try? JSONDecoder().decode(APNsErrorBody.self, from: Data(body)))?.reason ?? "HTTP \(status)"
        let retryAfter = { RetryAfter.parse(headers["Retry-After"], now: now) }
        switch (status, reason) {
        case (410, _):
            // Unregistered / ExpiredToken: the activity or device no longer uses this token.
            return .result(.tokenRefused(TokenRefusal(token: .activity, reason: reason, suspect: TokenRefusal.apnsBundle,
                                                      misconfigurationShaped: false)))
        case (400, "BadDeviceToken"):
            // Also the answer to a token of the other environment (sandbox vs production).
            return .result(.tokenRefused(TokenRefusal(token: .activity, reason: reason, suspect: TokenRefusal.apnsEnvironment,
                                                      misconfigurationShaped: true)))
        case (400, "DeviceTokenNotForTopic"):
            // The token belongs to another app than `apns-topic` names.
            return .result(.tokenRefused(TokenRefusal(token: .activity, reason: reason, suspect: TokenRefusal.apnsBundle,
                                                      misconfigurationShaped: true)))
        case (apnsRefreshStatus, "ExpiredProviderToken"):
            return .refreshCredentials(reason: reason)
        case (403, _), (404, _), (405, _):
            return .result(.configurationError(reason: "APNs \(status) \(reason)"))
        case (429, _):
            // TooManyRequests: too many pushes to this one token; TooManyProviderTokenUpdates: the key was re-signed
            // too often. Either way only this push waits.
            return .result(.retryable(after: retryAfter(), reason: reason == "HTTP 429" ? "TooManyRequests" : reason))
        case (500..<600, _):
            return .result(.retryable(after: retryAfter(), reason: reason))
        default:
            return .result(.rejected(reason: reason))
        }
    }

    /// Classifies a request that got no answer: timeouts and connection errors are retryable.
    public static func transportFailure(_ error: any Error) -> PushResult {
        guard let error = error as? HTTPClientError else { return .retryable(after: nil, reason: "\(error)") }
        if error.code == .invalidRequest { return .configurationError(reason: "invalid request: \(error.message)") }
        return .retryable(after: nil, reason: "\(error.code.rawValue): \(error.message)")
    }

    /// Classifies a failure to get an access or provider token.
    public static func credentialsFailure(_ error: any Error) -> PushResult {
        if let error = error as? PushError, error.code == .tokenEndpointUnavailable {
            return .retryable(after: nil, reason: error.description)
        }
        return .configurationError(reason: "\(error)")
    }
}

private struct FCMSuccess: Decodable { let name: String? }

private struct APNsErrorBody: Decodable { let reason: String? }

/// The parts of an FCM (google.rpc.Status) error body that decide the outcome.
struct FCMErrorAnswer {
    private struct Body: Decodable {
        struct Status: Decodable {
            let code: Int?
            let message: String?
            let status: String?
            let details: [Detail]?
        }
        struct Detail: Decodable {
            let errorCode: String?
            let fieldViolations: [Violation]?
        }
        struct Violation: Decodable {
            let field: String?
            let description: String?
        }
        let error: Status
    }

    let httpStatus: Int
    let status: String?
    let errorCode: String?
    let message: String?
    let violations: [(field: String, description: String)]

    init(status httpStatus: Int, body: [UInt8]) {
        self.httpStatus = httpStatus
        let parsed = (try? JSONDecoder().decode(Body.self, from: Data(body)))?.error
        status = parsed?.status
        message = parsed?.message
        let details = parsed?.details ?? []
        errorCode = details.lazy.compactMap(\.errorCode).first
        violations = details.flatMap { $0.fieldViolations ?? [] }.map { ($0.field ?? "", $0.description ?? "") }
    }

    /// The token a 400 blames, from its `BadRequest` field violations (`message.token`,
    /// `message.apns.live_activity_token`) or, without them, its message ("The registration token is not a
    /// valid FCM registration token"); nil when the fault is elsewhere in the message.
    var blamedToken: PushTokenKind? {
        for violation in violations {
            let field = violation.field.lowercased()
            if field.contains("live_activity_token") { return .activity }
            if field == "message.token" || field.hasSuffix(".token") && !field.contains("apns") { return .fcm }
        }
        guard violations.isEmpty, let message = message?.lowercased() else { return nil }
        if message.contains("live_activity_token") || message.contains("live activity token") { return .activity }
        if message.contains("registration token") { return .fcm }
        return nil
    }

    /// `CODE: message (field: description; ...)`, for logs and the job's last error.
    var summary: String {
        var text = errorCode ?? status ?? "HTTP \(httpStatus)"
        if let message, !message.isEmpty { text += ": \(message)" }
        if !violations.isEmpty {
            text += " (" + violations.map { "\($0.field): \($0.description)" }.joined(separator: "; ") + ")"
        }
        return text
    }
}
