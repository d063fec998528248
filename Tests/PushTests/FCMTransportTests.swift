import Foundation
import HTTPClient
import JWT
import Push
import Testing
import TestSupport

@Suite struct FCMTransportTests {
    @Test func sendsTheSpecifiedRequestAndSignsTheAssertion() async throws {
        let harness = try await FCMHarness.make()
        let result = await harness.transport.send(FCMHarness.liveActivity(token: "ok-device1"))
        #expect(result == .accepted(messageName: "projects/countdown-test/messages/fake-1"))
        let recent = try #require(try await harness.sends().first)
        let tokenRequests = try await harness.tokenRequests()
        #expect(recent.method == "POST")
        #expect(recent.path == "/v1/projects/countdown-test/messages:send")
        #expect(recent.headers["authorization"] == "Bearer " + (try #require(tokenRequests.first.flatMap(FCMHarness.accessToken))))
        #expect(recent.headers["content-type"] == "application/json; charset=UTF-8")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(recent.body.utf8)) as? [String: Any])
        let message = try #require(body["message"] as? [String: Any])
        #expect(message["token"] as? String == "ok-device1")
        let apns = try #require(message["apns"] as? [String: Any])
        #expect(apns["live_activity_token"] as? String == "pts-ok-device1")
        #expect(apns["headers"] as? [String: String] == ["apns-priority": "10", "apns-expiration": "1776708000"])

        let form = try #require(tokenRequests.first?.body)
        #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        let assertion = String(try #require(form.split(separator: "=").last))
        let publicKey = try AsymmetricKey.privateKey(pem: PushTestKeys.rsaPEM).publicKey()
        let jwt = try JWTVerifier(keys: [try .rs256(publicKey)], audience: harness.fake.baseURL + "/token", now: harness.clock.function)
            .verify(assertion)
        struct Claims: Decodable { let iss: String; let scope: String; let iat: Int; let exp: Int }
        let claims = try jwt.decodeClaims(as: Claims.self)
        #expect(claims.iss == "push@countdown-test.iam.gserviceaccount.com")
        #expect(claims.scope == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims.exp - claims.iat <= 3600 && claims.exp > claims.iat)
        #expect(jwt.header.kid == "k1")
    }

    @Test func notificationsAreSent() async throws {
        let harness = try await FCMHarness.make()
        let result = await harness.transport.send(.notification(
            id: "reminder:s1", fcmToken: "ok-r", title: "Yayın başlıyor", body: "10 dakika", data: ["type": "stream_reminder"]))
        guard case .accepted = result else { Issue.record("got \(result)"); return }
        let body = try #require(try await harness.sends().first?.body)
        #expect(body.contains(#""notification":{"title":"Yayın başlıyor","body":"10 dakika"}"#))
    }

    @Test func everyErrorClassIsClassified() async throws {
        let harness = try await FCMHarness.make()
        let tokenViolation = "The registration token is not a valid FCM registration token"
        try await harness.control.fault([
            ["token": "unregistered-1", "status": 404, "errorCode": "UNREGISTERED"],
            ["token": "invalid-1", "status": 400, "errorCode": "INVALID_ARGUMENT", "message": tokenViolation, "violationField": "message.token"],
            ["token": "mismatch-1", "status": 403, "errorCode": "SENDER_ID_MISMATCH"],
            ["token": "quota-1", "status": 429, "errorCode": "QUOTA_EXCEEDED", "retryAfter": 7],
            ["token": "quotadate-1", "status": 429, "errorCode": "QUOTA_EXCEEDED", "retryAfter": 30, "retryAfterFormat": "date"],
            ["token": "unavailable-1", "status": 503, "errorCode": "UNAVAILABLE"],
            ["token": "internal-1", "status": 500, "errorCode": "INTERNAL"],
            ["token": "thirdparty-1", "status": 401, "errorCode": "THIRD_PARTY_AUTH_ERROR"],
        ])
        let cases: [(String, (PushResult) -> Bool)] = [
            ("unregistered-1", { if case .tokenRefused(let r) = $0 { r.token == .fcm && r.reason == "UNREGISTERED" } else { false } }),
            ("invalid-1", { if case .tokenRefused(let r) = $0 { r.token == .fcm && r.reason == "INVALID_ARGUMENT" } else { false } }),
            ("mismatch-1", { if case .tokenRefused(let r) = $0 { r.token == .fcm && r.misconfigurationShaped } else { false } }),
            ("quota-1", { $0 == .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED") && $0.isThrottled }),
            ("quotadate-1", {
                if case .retryable(let after?, "QUOTA_EXCEEDED") = $0 { after > .seconds(20) && after <= .seconds(60) } else { false }
            }),
            ("unavailable-1", { $0 == .retryable(after: nil, reason: "UNAVAILABLE") }),
            ("internal-1", { $0 == .retryable(after: nil, reason: "INTERNAL") }),
            ("thirdparty-1", { if case .configurationError(let reason) = $0 { reason.hasPrefix("THIRD_PARTY_AUTH_ERROR") } else { false } }),
        ]
        for (token, check) in cases {
            let result = await harness.transport.send(FCMHarness.liveActivity(token: token))
            #expect(check(result), "\(token) → \(result)")
        }
        #expect(try await harness.tokenRequests().count == 1)
    }

    @Test func tokenIsRefreshedBeforeItExpires() async throws {
        let harness = try await FCMHarness.make(tokenLifetime: 600, clockStart: Date().addingTimeInterval(-600))
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-1")).label == "accepted")
        harness.clock.advance(by: 500)
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-2")).label == "accepted")
        #expect(try await harness.tokenRequests().count == 1)
        harness.clock.advance(by: 45)  // 545 s: inside the last 10% of the lifetime
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-3")).label == "accepted")
        let tokenRequests = try await harness.tokenRequests()
        #expect(tokenRequests.count == 2)
        let second = try #require(tokenRequests.last.flatMap(FCMHarness.accessToken))
        #expect(try await harness.sends().last?.headers["authorization"] == "Bearer " + second)
        #expect(harness.refreshes.value == 2)
    }

    @Test func unauthorizedForcesOneRefreshAndOneRetry() async throws {
        let harness = try await FCMHarness.make()
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-1")).label == "accepted")
        try await harness.control.revokeTokens()
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-2")).label == "accepted")
        #expect(try await harness.tokenRequests().count == 2)
        #expect(try await harness.sends().map(\.status) == [200, 401, 200])  // ok-1, the refused ok-2, the retried ok-2
    }

    @Test func unauthorizedAfterARefreshIsAConfigurationErrorWithoutSpinning() async throws {
        let harness = try await FCMHarness.make()
        try await harness.control.fault(["status": 401, "forSeconds": 600])
        let result = await harness.transport.send(FCMHarness.liveActivity(token: "ok-1"))
        guard case .configurationError(let reason) = result else { Issue.record("got \(result)"); return }
        #expect(reason.contains("UNAUTHENTICATED"))
        #expect(try await harness.tokenRequests().count == 2)
        #expect(try await harness.sends().count == 2)
    }

    @Test func tokenEndpointRefusalIsConfigurationAndOutageIsRetryable() async throws {
        let harness = try await FCMHarness.make()
        try await harness.control.fault(["tokenStatus": 400])
        let refused = await harness.transport.send(FCMHarness.liveActivity(token: "ok-1"))
        guard case .configurationError(let reason) = refused else { Issue.record("got \(refused)"); return }
        #expect(reason.contains("invalid_grant"))
        _ = try await harness.control.call("DELETE", "/fake/faults")
        try await harness.control.fault(["tokenStatus": 503])
        guard case .retryable(nil, let outage) = await harness.transport.send(FCMHarness.liveActivity(token: "ok-2")) else {
            Issue.record("a token endpoint outage should be retryable")
            return
        }
        #expect(outage.contains("503"))
        #expect(try await harness.sends().isEmpty)
    }

    @Test func fiveHundredConcurrentSendersShareOneRefresh() async throws {
        let harness = try await FCMHarness.make()
        try await harness.control.fault(["tokenLatencyMs": 200])
        let first = await harness.sendConcurrently(500)
        #expect(first.allSatisfy { $0.label == "accepted" })
        #expect(try await harness.tokenRequests().count == 1)

        try await harness.control.revokeTokens()
        let second = await harness.sendConcurrently(500)
        #expect(second.allSatisfy { $0.label == "accepted" })
        #expect(try await harness.tokenRequests().count == 2)
        #expect(harness.refreshes.value == 2)
    }

    @Test func connectionRefusedIsRetryable() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let harness = try await FCMHarness.make(fcmBaseURL: "http://\(refusing.address)")
        guard case .retryable(nil, let reason) = await harness.transport.send(FCMHarness.liveActivity(token: "ok-1")) else {
            Issue.record("expected retryable")
            return
        }
        #expect(reason.hasPrefix("connectionRefused"))
    }

    @Test func timeoutIsRetryable() async throws {
        let harness = try await FCMHarness.make(latencyMilliseconds: 5000, requestTimeout: .milliseconds(300))
        guard case .retryable(nil, let reason) = await harness.transport.send(FCMHarness.liveActivity(token: "ok-1")) else {
            Issue.record("expected retryable")
            return
        }
        #expect(reason.hasPrefix("timeout"))
    }

    @Test func invalidApsIsRejectedWithoutSending() async throws {
        let harness = try await FCMHarness.make()
        let message = PushMessage.liveActivity(id: "x", fcmToken: "ok-1", activityToken: "a", apnsHeaders: [:], apsJSON: Array("{".utf8))
        #expect(await harness.transport.send(message) == .rejected(reason: "the aps payload is not a JSON object"))
        #expect(try await harness.sends().isEmpty)
    }

    @Test func projectAndBaseURLFormTheEndpoint() {
        let transport = FCMTransport(
            projectID: "allmine-prod", baseURL: "https://fcm.googleapis.com/", tokens: FixedToken(), http: ScriptedHTTP { _, _ in ScriptedHTTP.response(200) })
        #expect(transport.endpoint == "https://fcm.googleapis.com/v1/projects/allmine-prod/messages:send")
    }
}

struct FixedToken: AccessTokenProviding {
    func accessToken() async throws -> String { "fixed" }
    func invalidate(_ token: String) async {}
}

@Suite struct FCMAccessTokenProviderTests {
    static let tokenAnswer = #"{"access_token":"ya29.a","expires_in":3600,"token_type":"Bearer"}"#

    @Test func failedEarlyRefreshKeepsTheValidTokenAndBacksOff() async throws {
        let clock = ManualClock()
        let http = ScriptedHTTP { _, index in
            index == 0 ? ScriptedHTTP.response(200, Self.tokenAnswer) : ScriptedHTTP.response(503, #"{"error":"backendError"}"#)
        }
        let account = try ServiceAccount.load(file: PushTestKeys.serviceAccountFile(tokenURI: "https://oauth.example/token"))
        let provider = try FCMAccessTokenProvider(account: account, http: http, now: clock.function)
        #expect(try await provider.accessToken() == "ya29.a")
        clock.advance(by: 3400)  // past the refresh point, before expiry
        #expect(try await provider.accessToken() == "ya29.a")
        #expect(try await provider.accessToken() == "ya29.a")
        #expect(http.requests.value.count == 2, "one failed refresh, then a pause")
        clock.advance(by: 11)
        #expect(try await provider.accessToken() == "ya29.a")
        #expect(http.requests.value.count == 3)
        clock.advance(by: 200)  // expired: the outage is now the caller's problem
        let error = await #expect(throws: PushError.self) { try await provider.accessToken() }
        #expect(error?.code == .tokenEndpointUnavailable)
    }

    @Test func aRefusedTokenIsDroppedAtMostOncePerInterval() async throws {
        // Google refusing every token (a revoked account) must not cost a token exchange per batch.
        let clock = ManualClock()
        let http = ScriptedHTTP { _, index in
            ScriptedHTTP.response(200, #"{"access_token":"ya29.\#(index)","expires_in":3600,"token_type":"Bearer"}"#)
        }
        let account = try ServiceAccount.load(file: PushTestKeys.serviceAccountFile(tokenURI: "https://oauth.example/token"))
        let provider = try FCMAccessTokenProvider(account: account, http: http, now: clock.function)
        #expect(try await provider.accessToken() == "ya29.0")
        await provider.invalidate("ya29.0")
        #expect(try await provider.accessToken() == "ya29.1", "the first refusal gets a new token at once")
        clock.advance(by: 30)
        await provider.invalidate("ya29.1")
        #expect(try await provider.accessToken() == "ya29.1", "a refusal soon after is kept")
        clock.advance(by: 30)
        await provider.invalidate("ya29.1")
        #expect(try await provider.accessToken() == "ya29.2")
        #expect(http.requests.value.count == 3)
    }

    @Test func exchangeRequestIsFormEncoded() async throws {
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(200, Self.tokenAnswer) }
        let account = try ServiceAccount.load(file: PushTestKeys.serviceAccountFile(tokenURI: "https://oauth.example/token"))
        let provider = try FCMAccessTokenProvider(account: account, http: http)
        _ = try await provider.accessToken()
        let request = try #require(http.requests.value.first)
        #expect(request.url == "https://oauth.example/token")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        let form = String(decoding: request.body, as: UTF8.self)
        #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey"))
    }
}
