import Foundation
import HTTPClient
import Push
import Testing
import TestSupport

/// The worker's APNs client (`APNsTransport`, `APNsProviderToken`, libcurl over HTTP/2 and TLS trusting the test CA)
/// against the fake APNs: each of Apple's answers the fake gives becomes the outcome the worker acts on.
@Suite struct APNsTransportFakeTests {
    static let token = String(repeating: "5e", count: 32)

    static func transport(_ apns: FakeAPNsProcess) throws -> (APNsTransport, HTTPClient) {
        let signer = try APNsProviderToken(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID)
        let http = try HTTPClient(configuration: HTTPClientConfiguration(name: "apns-fake-test", maxConnections: 2, caFile: apns.caFile))
        let configuration = APNsConfiguration(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, bundleID: apns.bundleID,
                                              baseURLOverride: apns.baseURL)
        return (APNsTransport(configuration: configuration, tokens: signer, http: http), http)
    }

    static func update(_ token: String = token) -> PushMessage {
        .liveActivity(id: "m-\(token.prefix(6))", fcmToken: "", activityToken: token, apnsHeaders: ["apns-expiration": "0"],
                      apsJSON: Array(#"{"aps":{"event":"update","timestamp":1760000000,"content-state":{"streamId":"s1"}}}"#.utf8))
    }

    @Test func apnsAnswersBecomeTheWorkersOutcomes() async throws {
        let apns = try await FakeAPNsProcess()
        let (transport, http) = try Self.transport(apns)
        defer { http.shutdown() }

        guard case .accepted(let id) = await transport.send(Self.update()) else { Issue.record("not accepted"); return }
        #expect(id.flatMap(UUID.init(uuidString:)) != nil, "the apns-id")

        let gone = String(repeating: "6f", count: 32)
        try await apns.control.fault([
            ["token": gone, "status": 410, "reason": "Unregistered"] as [String: Any],
            ["endpoint": "device", "token": Self.token, "status": 429, "reason": "TooManyRequests", "retryAfter": 3, "nextRequests": 1],
        ])
        guard case .tokenRefused(let refusal) = await transport.send(Self.update(gone)) else { Issue.record("410 not a refused token"); return }
        #expect(refusal.reason == "Unregistered" && !refusal.misconfigurationShaped)
        #expect(await transport.send(Self.update()) == .retryable(after: .seconds(3), reason: "TooManyRequests"))
        #expect(await transport.send(Self.update()).label == "accepted", "the 429 was for one request")

        try await apns.control.fault(["endpoint": "device", "status": 400, "reason": "BadDeviceToken", "nextRequests": 1] as [String: Any])
        guard case .tokenRefused(let bad) = await transport.send(Self.update()) else { Issue.record("BadDeviceToken not a refused token"); return }
        #expect(bad.reason == "BadDeviceToken" && bad.misconfigurationShaped)

        let requests = try await apns.control.requests(kind: "device")
        #expect(requests.allSatisfy { $0.headers["apns-topic"] == "\(apns.bundleID).push-type.liveactivity" && $0.headers["apns-push-type"] == "liveactivity" })
    }

    @Test func aKeyTheFakeDoesNotKnowIsAConfigurationError() async throws {
        let apns = try await FakeAPNsProcess()
        let other = try await FakeAPNsProcess()
        let signer = try APNsProviderToken(keyFile: other.keyFile, keyID: apns.keyID, teamID: apns.teamID)
        let http = try HTTPClient(configuration: HTTPClientConfiguration(name: "apns-fake-test", maxConnections: 2, caFile: apns.caFile))
        defer { http.shutdown() }
        let transport = APNsTransport(
            configuration: APNsConfiguration(keyFile: other.keyFile, keyID: apns.keyID, teamID: apns.teamID, bundleID: apns.bundleID,
                                             baseURLOverride: apns.baseURL),
            tokens: signer, http: http)
        #expect(await transport.send(Self.update()) == .configurationError(reason: "APNs 403 InvalidProviderToken"))
        // Without the test CA the fake's certificate is not trusted: a transport failure, retried, never accepted.
        let untrusting = try HTTPClient(configuration: HTTPClientConfiguration(name: "apns-no-ca", maxConnections: 1))
        defer { untrusting.shutdown() }
        let plain = APNsTransport(configuration: transport.configuration, tokens: try APNsProviderToken(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID),
                                  http: untrusting)
        #expect(await plain.send(Self.update()).label == "retryable")
    }
}
