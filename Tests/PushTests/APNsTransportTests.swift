import BlockingIO
import Foundation
import HTTPClient
import JWT
import Push
import Testing

@Suite struct APNsTransportTests {
    static let aps = Array(#"{"aps":{"event":"end","timestamp":1776384000,"dismissal-date":1776384900}}"#.utf8)
    static let activityToken = "80a1b2c3d4e5f60718293a4b5c6d7e8f"

    static func configuration(environment: APNsConfiguration.Environment = .production, override: String? = nil) -> APNsConfiguration {
        APNsConfiguration(
            keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", bundleID: "com.allmine.app",
            environment: environment, baseURLOverride: override)
    }

    static func message(token: String = activityToken, headers: [String: String] = ["apns-priority": "10", "apns-expiration": "1776708000"]) -> PushMessage {
        .liveActivity(id: "end:s1:d1", fcmToken: "fcm", activityToken: token, apnsHeaders: headers, apsJSON: aps)
    }

    @Test func baseURLFollowsTheEnvironment() {
        #expect(Self.configuration().baseURL == "https://api.push.apple.com")
        #expect(Self.configuration(environment: .development).baseURL == "https://api.sandbox.push.apple.com")
        #expect(Self.configuration(override: "http://127.0.0.1:9/").baseURL == "http://127.0.0.1:9")
        #expect(Self.configuration().liveActivityTopic == "com.allmine.app.push-type.liveactivity")
    }

    @Test func requestCarriesPathTopicHeadersAndBody() {
        let request = APNsTransport.request(
            activityToken: Self.activityToken, apnsHeaders: ["apns-priority": "5", "apns-expiration": "1776708000", "x-other": "dropped"],
            apsJSON: Self.aps, configuration: Self.configuration(environment: .development), bearer: "jwt.token.sig")
        #expect(request.method == .post)
        #expect(request.url == "https://api.sandbox.push.apple.com/3/device/\(Self.activityToken)")
        #expect(request.headers["apns-push-type"] == "liveactivity")
        #expect(request.headers["apns-topic"] == "com.allmine.app.push-type.liveactivity")
        #expect(request.headers["apns-priority"] == "5")
        #expect(request.headers["apns-expiration"] == "1776708000")
        #expect(request.headers["authorization"] == "bearer jwt.token.sig")
        #expect(request.headers["x-other"] == nil)
        #expect(request.body == Self.aps)
        let defaulted = APNsTransport.request(
            activityToken: "ab", apnsHeaders: [:], apsJSON: Self.aps, configuration: Self.configuration(), bearer: "b")
        #expect(defaulted.headers["apns-priority"] == "10")
    }

    @Test func providerTokenHasKidIssAndIatAndVerifies() throws {
        let clock = ManualClock()
        let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", now: clock.function)
        let token = try provider.current()
        let key = try VerificationKey.es256(try .privateKey(file: PushTestKeys.p8Path), keyID: "TESTKEY123")
        let jwt = try JWTVerifier(keys: [key], requireExpiry: false, now: clock.function).verify(token)
        #expect(jwt.header.alg == "ES256")
        #expect(jwt.header.kid == "TESTKEY123")
        #expect(jwt.header.typ == nil)
        #expect(jwt.claims.iss == "TEAM456789")
        #expect(jwt.claims.iat == clock.now.timeIntervalSince1970)
        #expect(jwt.signature.count == 64)
    }

    @Test func providerTokenIsReusedThenRefreshedOnSchedule() async throws {
        let clock = ManualClock()
        let refreshes = Counter()
        let provider = try APNsProviderToken(
            keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", refreshInterval: .seconds(30 * 60),
            now: clock.function, onRefresh: { refreshes.increment() })
        let first = try provider.current()
        clock.advance(by: 10 * 60)
        // APNs calls it expired while it is younger than 20 minutes: re-signing now would be too often.
        await provider.invalidate(first)
        #expect(try provider.current() == first)
        clock.advance(by: 19 * 60)
        #expect(try provider.current() == first)
        clock.advance(by: 60)
        let second = try provider.current()
        #expect(second != first)
        clock.advance(by: 21 * 60)
        await provider.invalidate(second)
        #expect(try provider.current() != second)
        #expect(refreshes.value == 3)
    }

    @Test func refreshIntervalIsClampedToAPNsLimits() throws {
        let clock = ManualClock()
        let eager = try APNsProviderToken(
            keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", refreshInterval: .seconds(60), now: clock.function)
        let first = try eager.current()
        clock.advance(by: 19 * 60)
        #expect(try eager.current() == first)
        clock.advance(by: 60)
        #expect(try eager.current() != first)

        let lazy = try APNsProviderToken(
            keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", refreshInterval: .seconds(5 * 3600), now: clock.function)
        let old = try lazy.current()
        clock.advance(by: 60 * 60)
        #expect(try lazy.current() != old)
    }

    @Test func keyFileProblemsNameTheFile() throws {
        func error(_ path: String, keyID: String = "TESTKEY123", teamID: String = "TEAM456789") -> PushError? {
            do {
                _ = try APNsProviderToken(keyFile: path, keyID: keyID, teamID: teamID)
                return nil
            } catch {
                return error as? PushError
            }
        }
        let missing = PushTestKeys.directory + "/AuthKey_MISSING.p8"
        #expect(error(missing) == PushError(.invalidCredentials, "no such file", file: missing))
        let garbage = PushTestKeys.write("not a key", named: "garbage.p8")
        #expect(error(garbage)?.file == garbage)
        #expect(error(garbage)?.message.contains("PEM") == true)
        #expect(error(PushTestKeys.rsaPath)?.message.contains("ES256") == true)
        #expect(error(PushTestKeys.p8Path, keyID: "")?.field == "APNS_KEY_ID")
        #expect(error(PushTestKeys.p8Path, teamID: " ")?.field == "APNS_TEAM_ID")
    }

    @Test func expiredProviderTokenIsRefreshedOnceThenRetried() async throws {
        let clock = ManualClock()
        let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", now: clock.function)
        let http = ScriptedHTTP { _, index in
            index == 0
                ? ScriptedHTTP.response(403, #"{"reason":"ExpiredProviderToken"}"#)
                : ScriptedHTTP.response(200, headers: ["apns-id": "A1"])
        }
        let transport = APNsTransport(configuration: Self.configuration(), tokens: provider, http: http, now: clock.function)
        _ = try provider.current()
        clock.advance(by: 25 * 60)  // old enough to be re-signed
        #expect(await transport.send(Self.message()) == .accepted(messageName: "A1"))
        let authorizations = http.requests.value.map { $0.headers["authorization"] }
        #expect(authorizations.count == 2)
        #expect(authorizations[0] != authorizations[1])
    }

    @Test func expiredProviderTokenTwiceIsAConfigurationError() async throws {
        let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789")
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(403, #"{"reason":"ExpiredProviderToken"}"#) }
        let transport = APNsTransport(configuration: Self.configuration(), tokens: provider, http: http)
        guard case .configurationError(let reason) = await transport.send(Self.message()) else {
            Issue.record("expected a configuration error")
            return
        }
        #expect(reason.contains("ExpiredProviderToken"))
        #expect(http.requests.value.count == 2)
    }

    @Test func answersAreClassified() async throws {
        let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789")
        let answers: [(HTTPResponse, PushResult)] = [
            (ScriptedHTTP.response(410, #"{"reason":"Unregistered","timestamp":1776384000000}"#), .tokenRefused(TokenRefusal(token: .activity, reason: "Unregistered", suspect: TokenRefusal.apnsBundle, misconfigurationShaped: false))),
            (ScriptedHTTP.response(400, #"{"reason":"BadDeviceToken"}"#), .tokenRefused(TokenRefusal(token: .activity, reason: "BadDeviceToken", suspect: TokenRefusal.apnsEnvironment, misconfigurationShaped: true))),
            (ScriptedHTTP.response(413, #"{"reason":"PayloadTooLarge"}"#), .rejected(reason: "PayloadTooLarge")),
            (ScriptedHTTP.response(400, #"{"reason":"DeviceTokenNotForTopic"}"#),
             .tokenRefused(TokenRefusal(token: .activity, reason: "DeviceTokenNotForTopic", suspect: TokenRefusal.apnsBundle, misconfigurationShaped: true))),
            (ScriptedHTTP.response(429, #"{"reason":"TooManyRequests"}"#, headers: ["Retry-After": "9"]), .retryable(after: .seconds(9), reason: "TooManyRequests")),
            (ScriptedHTTP.response(503, #"{"reason":"ServiceUnavailable"}"#), .retryable(after: nil, reason: "ServiceUnavailable")),
        ]
        for (response, expected) in answers {
            let transport = APNsTransport(configuration: Self.configuration(), tokens: provider, http: ScriptedHTTP { _, _ in response })
            #expect(await transport.send(Self.message()) == expected)
        }
    }

    @Test func whatAPNsCannotTakeIsRejectedWithoutSending() async throws {
        let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789")
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(200) }
        let transport = APNsTransport(configuration: Self.configuration(), tokens: provider, http: http)
        guard case .rejected = await transport.send(.notification(id: "r", fcmToken: "f", title: "t", body: "b", data: [:])) else {
            Issue.record("a notification should be rejected")
            return
        }
        guard case .tokenRefused(let refusal) = await transport.send(Self.message(token: "../../etc")) else {
            Issue.record("a malformed activity token should be refused")
            return
        }
        #expect(refusal.token == .activity)
        #expect(http.requests.value.isEmpty)
    }
}

/// A thread-safe counter for callbacks.
final class Counter: Sendable {
    private let count = Locked(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.value }
}
