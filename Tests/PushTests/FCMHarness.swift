import Foundation
import HTTPClient
import JWT
import Push
import TestSupport

/// An FCM transport wired to a stub server: real HTTP client, real token provider, a manual clock.
struct FCMHarness {
    let server: StubServer
    let client: HTTPClient
    let provider: FCMAccessTokenProvider
    let transport: FCMTransport
    let refreshes: Counter
    let clock: ManualClock

    static func make(
        latencyMilliseconds: Int = 0, requestTimeout: Duration = .seconds(5), fcmBaseURL: String? = nil, maxConnections: Int = 64
    ) async throws -> FCMHarness {
        let server = try await StubServer.start(latencyMilliseconds: latencyMilliseconds)
        let client = try HTTPClient(configuration: HTTPClientConfiguration(name: "fcm-test", maxConnections: maxConnections))
        let account = try ServiceAccount.load(file: PushTestKeys.serviceAccountFile(tokenURI: server.baseURL + "/token"))
        let clock = ManualClock(Date())
        let refreshes = Counter()
        let provider = try FCMAccessTokenProvider(account: account, http: client, now: clock.function, onRefresh: { _ in refreshes.increment() })
        let transport = FCMTransport(
            projectID: account.projectID, baseURL: fcmBaseURL ?? server.baseURL, tokens: provider, http: client,
            requestTimeout: requestTimeout, now: clock.function)
        return FCMHarness(server: server, client: client, provider: provider, transport: transport, refreshes: refreshes, clock: clock)
    }

    static func liveActivity(token: String) -> PushMessage {
        .liveActivity(
            id: "start:s1:\(token)", fcmToken: token, activityToken: "pts-\(token)",
            apnsHeaders: ["apns-priority": "10", "apns-expiration": "1776708000"],
            apsJSON: Array(#"{"aps":{"event":"start","timestamp":1776384000}}"#.utf8))
    }

    /// Sends `count` live activities concurrently.
    func sendConcurrently(_ count: Int, token: (Int) -> String = { "ok-\($0)" }) async -> [PushResult] {
        let messages = (0..<count).map { Self.liveActivity(token: token($0)) }
        return await transport.send(messages, concurrency: count)
    }
}
