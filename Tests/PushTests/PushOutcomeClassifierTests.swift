import Foundation
import HTTPClient
import HTTPTypes
import Push
import Telemetry
import Testing

@Suite struct PushOutcomeClassifierTests {
    static let now = Date(timeIntervalSince1970: 1_776_384_000)

    static func fcmError(_ code: Int, _ status: String, _ message: String, errorCode: String? = nil, violations: [(String, String)] = []) -> [UInt8] {
        var details: [[String: Any]] = []
        if let errorCode { details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode]) }
        if !violations.isEmpty {
            details.append(["@type": "type.googleapis.com/google.rpc.BadRequest",
                            "fieldViolations": violations.map { ["field": $0.0, "description": $0.1] }])
        }
        let object: [String: Any] = ["error": ["code": code, "message": message, "status": status, "details": details]]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    static func fcm(_ status: Int, _ body: [UInt8], headers: HTTPHeaders = [:]) -> PushOutcomeClassifier.Verdict {
        PushOutcomeClassifier.fcm(status: status, headers: headers, body: body, now: now)
    }

    static func apns(_ status: Int, reason: String?, headers: HTTPHeaders = [:]) -> PushOutcomeClassifier.Verdict {
        let body = reason.map { Array("{\"reason\":\"\($0)\"}".utf8) } ?? []
        return PushOutcomeClassifier.apns(status: status, headers: headers, body: body, now: now)
    }

    static func refusal(_ verdict: PushOutcomeClassifier.Verdict) -> TokenRefusal? {
        guard case .result(.tokenRefused(let refusal)) = verdict else { return nil }
        return refusal
    }

    /// The refusal without its suspect (checked separately where it matters).
    static func shape(_ verdict: PushOutcomeClassifier.Verdict) -> TokenRefusal? {
        refusal(verdict).map { TokenRefusal(token: $0.token, reason: $0.reason, suspect: "", misconfigurationShaped: $0.misconfigurationShaped) }
    }

    static func refused(_ token: PushTokenKind, _ reason: String, misconfiguration: Bool) -> TokenRefusal? {
        TokenRefusal(token: token, reason: reason, suspect: "", misconfigurationShaped: misconfiguration)
    }

    @Test func fcmSuccessCarriesTheMessageName() {
        #expect(Self.fcm(200, Array("{\"name\":\"projects/p/messages/123\"}".utf8)) == .result(.accepted(messageName: "projects/p/messages/123")))
        #expect(Self.fcm(200, []) == .result(.accepted(messageName: nil)))
    }

    /// The success answer is read by the project's JSON parser; for every body the name is what Foundation's
    /// decoder of `{"name": String?}` reads, as before (it still decides for bodies the strict parser refuses).
    @Test func fcmSuccessNameIsWhatTheDecoderReads() {
        struct Success: Decodable { let name: String? }
        func reference(_ body: [UInt8]) -> String? { (try? JSONDecoder().decode(Success.self, from: Data(body)))?.name }
        let named: [(String, String?)] = [
            (#"{"name":"projects/p/messages/0:1776384000%abc"}"#, "projects/p/messages/0:1776384000%abc"),
            (" {\n \"name\" : \"projects/p/messages/1\" }\r\n", "projects/p/messages/1"),
            (#"{"name":"a\/b\u00e9\ud83d\ude00\n"}"#, "a/b\u{E9}\u{1F600}\n"),
            (#"{"extra":{"a":[1,2.5,-3e2,true,false,null]},"name":"x"}"#, "x"),
            (#"{"name":""}"#, ""),
            (#"{"other":"x"}"#, nil),
            (#"{"name":null}"#, nil),
            (#"{"name":42}"#, nil),
            (#"{"name":["x"]}"#, nil),
            (#"{"name":{"x":1}}"#, nil),
            ("[]", nil), (#""x""#, nil), ("null", nil), ("", nil), ("not json", nil),
            (#"{"name":"x""#, nil), (#"{"name":"x"} trailing"#, nil), ("{\"name\":\"a\u{1}b\"}", nil),
        ]
        for (text, name) in named {
            let body = Array(text.utf8)
            #expect(Self.fcm(200, body) == .result(.accepted(messageName: name)), "\(text)")
            #expect(reference(body) == name, "the decoder agrees: \(text)")
        }
        // Bodies the strict parser refuses are decided by the decoder, whatever it makes of them (it reads "x" from
        // a trailing comma, for one).
        let unusual: [[UInt8]] = [
            Array(#"{"name":"x",}"#.utf8),
            Array(#"{"name":"a","name":"b"}"#.utf8),
            Array(#"{"name":"x","big":1e400}"#.utf8),
            [0xEF, 0xBB, 0xBF] + Array(#"{"name":"bom"}"#.utf8),
            Array(#"{"name":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(String(repeating: "[", count: 300).utf8),
        ]
        for body in unusual {
            #expect(Self.fcm(200, body) == .result(.accepted(messageName: reference(body))), "\(body)")
        }
        // Any 2xx is a success.
        #expect(Self.fcm(204, Array(#"{"name":"n"}"#.utf8)) == .result(.accepted(messageName: "n")))
    }

    @Test func fcmUnregisteredIsADeadToken() {
        let body = Self.fcmError(404, "NOT_FOUND", "Requested entity was not found.", errorCode: "UNREGISTERED")
        #expect(Self.shape(Self.fcm(404, body)) == Self.refused(.fcm, "UNREGISTERED", misconfiguration: false))
    }

    @Test func fcmNotFoundWithoutUnregisteredIsConfiguration() {
        // A wrong project answers 404 too: that must never wipe tokens.
        let verdict = Self.fcm(404, Self.fcmError(404, "NOT_FOUND", "Requested entity was not found."))
        guard case .result(.configurationError(let reason)) = verdict else { Issue.record("got \(verdict)"); return }
        #expect(reason.contains("NOT_FOUND"))
    }

    @Test func fcmInvalidArgumentOnTheTokenIsTokenLevel() {
        let body = Self.fcmError(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                                 errorCode: "INVALID_ARGUMENT", violations: [("message.token", "Invalid registration token")])
        #expect(Self.refusal(Self.fcm(400, body))?.token == .fcm)
        #expect(Self.refusal(Self.fcm(400, body))?.reason == "INVALID_ARGUMENT")
    }

    /// Firebase's documented example: no BadRequest detail, the message names the registration token.
    @Test func fcmInvalidRegistrationTokenWithoutFieldViolationsNamesTheFCMToken() {
        let body = Self.fcmError(400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                                 errorCode: "INVALID_ARGUMENT")
        #expect(Self.refusal(Self.fcm(400, body))?.token == .fcm)
    }

    /// A bad Live Activity token names `message.apns.live_activity_token`: the activity token is refused, never
    /// the FCM token (which also carries reminders and end pushes).
    @Test func fcmInvalidLiveActivityTokenNamesTheActivityToken() {
        let body = Self.fcmError(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", errorCode: "INVALID_ARGUMENT",
                                 violations: [("message.apns.live_activity_token", "Invalid live activity token")])
        #expect(Self.shape(Self.fcm(400, body)) == Self.refused(.activity, "INVALID_ARGUMENT", misconfiguration: false))
        let plain = Self.fcmError(400, "INVALID_ARGUMENT", "Invalid value at 'message.apns.live_activity_token'")
        #expect(Self.refusal(Self.fcm(400, plain))?.token == .activity)
    }

    @Test func fcmInvalidArgumentOnThePayloadIsNotTokenLevel() {
        let body = Self.fcmError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", errorCode: "INVALID_ARGUMENT",
                                 violations: [("message.apns.payload", "Unknown name \"x\"")])
        guard case .result(.rejected(let reason)) = Self.fcm(400, body) else { Issue.record("not rejected"); return }
        #expect(reason.contains("message.apns.payload: Unknown name \"x\""))
    }

    @Test func fcmSenderIDMismatchIsTokenLevel() {
        let body = Self.fcmError(403, "PERMISSION_DENIED", "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH")
        let refusal = Self.refusal(Self.fcm(403, body))
        #expect(Self.shape(Self.fcm(403, body)) == Self.refused(.fcm, "SENDER_ID_MISMATCH", misconfiguration: true))
        #expect(refusal?.suspect == TokenRefusal.fcmProject)
        let denied = Self.fcm(403, Self.fcmError(403, "PERMISSION_DENIED", "Firebase Cloud Messaging API has not been used"))
        #expect(denied == .result(.configurationError(reason: "PERMISSION_DENIED: Firebase Cloud Messaging API has not been used")))
    }

    @Test func fcmQuotaExceededHonoursRetryAfterSeconds() {
        let body = Self.fcmError(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", errorCode: "QUOTA_EXCEEDED")
        let verdict = Self.fcm(429, body, headers: ["Retry-After": "7"])
        #expect(verdict == .result(.retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED")))
        if case .result(let result) = verdict { #expect(result.isThrottled) }
        #expect(Self.fcm(429, body) == .result(.retryable(after: nil, reason: "QUOTA_EXCEEDED")))
    }

    @Test func fcmQuotaExceededHonoursRetryAfterDate() {
        let body = Self.fcmError(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", errorCode: "QUOTA_EXCEEDED")
        let date = "Fri, 17 Apr 2026 00:00:30 GMT"  // now + 30 s
        #expect(Self.fcm(429, body, headers: ["retry-after": date]) == .result(.retryable(after: .seconds(30), reason: "QUOTA_EXCEEDED")))
    }

    @Test func fcmServerErrorsAreRetryable() {
        let unavailable = Self.fcmError(503, "UNAVAILABLE", "The service is currently unavailable.", errorCode: "UNAVAILABLE")
        #expect(Self.fcm(503, unavailable) == .result(.retryable(after: nil, reason: "UNAVAILABLE")))
        #expect(Self.fcm(503, unavailable, headers: ["Retry-After": "3"]) == .result(.retryable(after: .seconds(3), reason: "UNAVAILABLE")))
        let internalError = Self.fcmError(500, "INTERNAL", "Internal error encountered.", errorCode: "INTERNAL")
        #expect(Self.fcm(500, internalError) == .result(.retryable(after: nil, reason: "INTERNAL")))
        #expect(Self.fcm(502, Array("<html>Bad Gateway</html>".utf8)) == .result(.retryable(after: nil, reason: "HTTP 502")))
        if case .result(let result) = Self.fcm(500, internalError) { #expect(!result.isThrottled) }
    }

    @Test func fcmUnauthenticatedAsksForARefresh() {
        let body = Self.fcmError(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        #expect(Self.fcm(401, body) == .refreshCredentials(reason: "UNAUTHENTICATED: Request had invalid authentication credentials."))
    }

    @Test func fcmThirdPartyAuthErrorIsConfiguration() {
        let body = Self.fcmError(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service", errorCode: "THIRD_PARTY_AUTH_ERROR")
        #expect(Self.fcm(401, body) == .result(.configurationError(reason: "THIRD_PARTY_AUTH_ERROR: Auth error from APNS or Web Push Service")))
    }

    @Test func apnsSuccessCarriesTheApnsID() {
        #expect(Self.apns(200, reason: nil, headers: ["apns-id": "E4F3-01"]) == .result(.accepted(messageName: "E4F3-01")))
    }

    @Test func apnsDeadTokens() {
        #expect(Self.shape(Self.apns(410, reason: "Unregistered")) == Self.refused(.activity, "Unregistered", misconfiguration: false))
        #expect(Self.shape(Self.apns(410, reason: "ExpiredToken")) == Self.refused(.activity, "ExpiredToken", misconfiguration: false))
    }

    /// BadDeviceToken is also APNs' answer to a token of the other environment; DeviceTokenNotForTopic to a token
    /// of another app: both name the activity token and are shaped like a misconfiguration.
    @Test func apnsMisconfigurationShapedRefusalsNameTheLikelyWrongSetting() {
        let badToken = Self.refusal(Self.apns(400, reason: "BadDeviceToken"))
        #expect(Self.shape(Self.apns(400, reason: "BadDeviceToken")) == Self.refused(.activity, "BadDeviceToken", misconfiguration: true))
        #expect(badToken?.suspect == "APNS_ENVIRONMENT")
        let notForTopic = Self.refusal(Self.apns(400, reason: "DeviceTokenNotForTopic"))
        #expect(Self.shape(Self.apns(400, reason: "DeviceTokenNotForTopic")) == Self.refused(.activity, "DeviceTokenNotForTopic", misconfiguration: true))
        #expect(notForTopic?.suspect == "APNS_BUNDLE_ID")
    }

    @Test func apnsRejections() {
        #expect(Self.apns(400, reason: "BadExpirationDate") == .result(.rejected(reason: "BadExpirationDate")))
        #expect(Self.apns(400, reason: "PayloadEmpty") == .result(.rejected(reason: "PayloadEmpty")))
        #expect(Self.apns(400, reason: "MissingDeviceToken") == .result(.rejected(reason: "MissingDeviceToken")))
        #expect(Self.apns(413, reason: "PayloadTooLarge") == .result(.rejected(reason: "PayloadTooLarge")))
    }

    @Test func apnsProviderTokenProblems() {
        #expect(Self.apns(403, reason: "ExpiredProviderToken") == .refreshCredentials(reason: "ExpiredProviderToken"))
        #expect(Self.apns(403, reason: "InvalidProviderToken") == .result(.configurationError(reason: "APNs 403 InvalidProviderToken")))
        #expect(Self.apns(403, reason: "BadCertificateEnvironment") == .result(.configurationError(reason: "APNs 403 BadCertificateEnvironment")))
        #expect(Self.apns(404, reason: "BadPath") == .result(.configurationError(reason: "APNs 404 BadPath")))
    }

    @Test func apnsThrottlingAndServerErrorsAreRetryable() {
        let throttled = Self.apns(429, reason: "TooManyRequests", headers: ["Retry-After": "12"])
        #expect(throttled == .result(.retryable(after: .seconds(12), reason: "TooManyRequests")))
        // One device token's limit: retried alone, the fleet's rate stays.
        if case .result(let result) = throttled { #expect(!result.isThrottled) }
        let updates = Self.apns(429, reason: "TooManyProviderTokenUpdates")
        #expect(updates == .result(.retryable(after: nil, reason: "TooManyProviderTokenUpdates")))
        if case .result(let result) = updates { #expect(!result.isThrottled) }
        #expect(Self.apns(429, reason: nil) == .result(.retryable(after: nil, reason: "TooManyRequests")))
        #expect(Self.apns(500, reason: "InternalServerError") == .result(.retryable(after: nil, reason: "InternalServerError")))
        #expect(Self.apns(503, reason: "ServiceUnavailable") == .result(.retryable(after: nil, reason: "ServiceUnavailable")))
    }

    @Test func transportFailuresAreRetryableUnlessTheRequestIsInvalid() {
        for code in [HTTPClientError.Code.timeout, .connectTimeout, .connectionRefused, .connectFailed, .io, .tls, .cannotResolveHost, .shutdown] {
            let result = PushOutcomeClassifier.transportFailure(HTTPClientError(code, "boom"))
            #expect(result == .retryable(after: nil, reason: "\(code.rawValue): boom"))
        }
        #expect(PushOutcomeClassifier.transportFailure(HTTPClientError(.invalidRequest, "bad URL")) == .configurationError(reason: "invalid request: bad URL"))
    }

    @Test func credentialFailures() {
        let unavailable = PushError(.tokenEndpointUnavailable, "token endpoint answered 503")
        #expect(PushOutcomeClassifier.credentialsFailure(unavailable) == .retryable(after: nil, reason: unavailable.description))
        let rejected = PushError(.tokenRejected, "token endpoint answered 400 (invalid_grant)", file: "/etc/sa.json")
        #expect(PushOutcomeClassifier.credentialsFailure(rejected) == .configurationError(reason: rejected.description))
    }

    @Test func retryAfterForms() {
        #expect(RetryAfter.parse("120", now: Self.now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: Self.now) == .zero)
        #expect(RetryAfter.parse("Fri, 17 Apr 2026 00:01:00 GMT", now: Self.now) == .seconds(60))
        #expect(RetryAfter.parse("Friday, 17-Apr-26 00:01:00 GMT", now: Self.now) == .seconds(60))
        #expect(RetryAfter.parse("Fri Apr 17 00:01:00 2026", now: Self.now) == .seconds(60))
        #expect(RetryAfter.parse("Thu, 16 Apr 2026 00:00:00 GMT", now: Self.now) == .zero)
        #expect(RetryAfter.parse("99999999999999999999", now: Self.now) == RetryAfter.maximum)
        #expect(RetryAfter.parse("soon", now: Self.now) == nil)
        #expect(RetryAfter.parse("-5", now: Self.now) == nil)
        #expect(RetryAfter.parse(nil, now: Self.now) == nil)
    }
}
