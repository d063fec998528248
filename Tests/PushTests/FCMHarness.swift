import BlockingIO
import Foundation
import HTTPClient
import JWT
import Push
import TestSupport

/// An FCM transport wired to a `countdown-fake-fcm` of its own: real HTTP client, real token provider, a manual clock.
/// The fake verifies every assertion against the test account's key and every message as FCM does.
struct FCMHarness {
    let fake: FakeFCMProcess
    /// Talks to the fake's `/fake/...` endpoints.
    let control: FakeFCMClient
    let client: HTTPClient
    let provider: FCMAccessTokenProvider
    let transport: FCMTransport
    let refreshes: Counter
    let clock: ManualClock

    /// - Parameters:
    ///   - latencyMilliseconds: the fake holds every send this long (a `latencyMs` fault).
    ///   - tokenLifetime: seconds the fake's access tokens last (`--token-ttl`).
    ///   - clockStart: where the manual clock starts. The fake checks an assertion's `iat` against its own clock, so
    ///     a test that moves the clock forward starts it that far in the past.
    static func make(
        latencyMilliseconds: Int = 0, tokenLifetime: Int = 3600, clockStart: Date = Date(), requestTimeout: Duration = .seconds(5),
        fcmBaseURL: String? = nil, maxConnections: Int = 64
    ) async throws -> FCMHarness {
        let fake = try await offThePool {
            try FakeFCMProcess.reachable(arguments: ["--token-ttl", String(tokenLifetime)]) { PushTestKeys.serviceAccountFile(tokenURI: $0) }
        }
        let control = FakeFCMClient(fake)
        if latencyMilliseconds > 0 { try await control.fault(["latencyMs": latencyMilliseconds]) }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(name: "fcm-test", maxConnections: maxConnections))
        let account = try ServiceAccount.load(file: fake.accountPath)
        let clock = ManualClock(clockStart)
        let refreshes = Counter()
        let provider = try FCMAccessTokenProvider(account: account, http: client, now: clock.function, onRefresh: { _ in refreshes.increment() })
        let transport = FCMTransport(
            projectID: account.projectID, baseURL: fcmBaseURL ?? fake.baseURL, tokens: provider, http: client,
            requestTimeout: requestTimeout, now: clock.function)
        return FCMHarness(
            fake: fake, control: control, client: client, provider: provider, transport: transport, refreshes: refreshes, clock: clock)
    }

    /// Token requests the fake received, oldest first, with its answers.
    func tokenRequests() async throws -> [FakeFCMRequest] { try await control.requests(kind: "token") }

    /// `messages:send` requests the fake received (answered or not), oldest first.
    func sends() async throws -> [FakeFCMRequest] { try await control.requests(kind: "send") }

    /// The access token the fake handed out in answer to `request`.
    static func accessToken(in request: FakeFCMRequest) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(request.answer.utf8)) as? [String: Any]
        return object?["access_token"] as? String
    }

    static func liveActivity(token: String) -> PushMessage {
        .liveActivity(
            id: "update:s1:\(token)", fcmToken: token, activityToken: "pts-\(token)",
            apnsHeaders: ["apns-priority": "10", "apns-expiration": "1776708000"],
            apsJSON: Array(#"{"aps":{"event":"update","timestamp":1776384000,"content-state":{"title":"Yayın"}}}"#.utf8))
    }

    /// Sends `count` live activities concurrently, each on its own (a batch of one).
    func sendConcurrently(_ count: Int, token: (Int) -> String = { "ok-\($0)" }) async -> [PushResult] {
        let messages = (0..<count).map { Self.liveActivity(token: token($0)) }
        return await messages.concurrentMap { [transport] in await transport.send($0) }
    }
}
