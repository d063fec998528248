import Foundation
import HTTPClient
import Testing
import TestSupport

/// The fake APNs behind nghttpx: token pushes over HTTP/2 and TLS, checked as APNs checks them, and recorded.
@Suite struct FakeAPNsPushTests {
    static let token = String(repeating: "ab12", count: 16)

    @Test func aTokenPushIsAcceptedOverHTTP2AndRecorded() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let answer = try await client.push(Self.token, headers: try client.liveActivityHeaders(["apns-collapse-id": "c1"]))
        #expect(answer.status == 200)
        #expect(answer.httpVersion == "2")
        let id = try #require(answer.headers["apns-id"])
        #expect(UUID(uuidString: id) != nil)

        let messages = try await apns.control.call("GET", "/fake/messages?kind=device&token=\(Self.token)")
        let entries = try #require((try JSONSerialization.jsonObject(with: messages.body)) as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        #expect(entry["id"] as? String == id)
        #expect(entry["event"] as? String == "update")
        let headers = entry["headers"] as? [String: String] ?? [:]
        #expect(headers["apns-topic"] == "\(apns.bundleID).push-type.liveactivity")
        #expect(headers["apns-collapse-id"] == "c1")
        #expect(((entry["payload"] as? [String: Any])?["aps"] as? [String: Any])?["event"] as? String == "update")

        let requests = try await apns.control.requests(kind: "device")
        #expect(requests.map(\.status) == [200])
        #expect(requests.first?.headers["authorization"]?.hasPrefix("bearer ") == true)
    }

    @Test func providerTokensAreCheckedAsAPNsChecksThem() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let otherKey = "\(apns.directory)/other.p8"
        _ = try runCommand("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKey])
        let cases: [(String, [String: String?], String)] = [
            ("no authorization", ["authorization": nil], "MissingProviderToken"),
            ("another key id", ["authorization": "bearer \(try client.providerToken(keyID: "OTHERKEY12"))"], "InvalidProviderToken"),
            ("another team", ["authorization": "bearer \(try client.providerToken(teamID: "OTHERTEAM1"))"], "InvalidProviderToken"),
            ("another key", ["authorization": "bearer \(try client.providerToken(keyFile: otherKey))"], "InvalidProviderToken"),
            ("issued in the future", ["authorization": "bearer \(try client.providerToken(issuedAt: Date().addingTimeInterval(600)))"], "InvalidProviderToken"),
            ("over an hour old", ["authorization": "bearer \(try client.providerToken(issuedAt: Date().addingTimeInterval(-3700)))"], "ExpiredProviderToken"),
        ]
        for (name, changes, reason) in cases {
            let answer = try await client.push(Self.token, headers: try client.liveActivityHeaders(changes))
            #expect(answer.status == 403, "\(name)")
            #expect(answer.reason == reason, "\(name)")
            // A refusal carries its apns-id too, as APNs answers every request.
            #expect(answer.headers["apns-id"] != nil, "\(name)")
        }
        let stats = try await apns.control.call("GET", "/fake/stats").json
        #expect(stats["accepted"] as? Int == 0)
        #expect((stats["byReason"] as? [String: Int])?["InvalidProviderToken"] == 4)
    }

    @Test func headersTokensAndPayloadsAreChecked() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let cases: [(String, String, [String: String?], String, Int, String)] = [
            ("not hexadecimal", "zz12", [:], FakeAPNsClient.aps(), 400, "BadDeviceToken"),
            ("no topic", Self.token, ["apns-topic": nil], FakeAPNsClient.aps(), 400, "MissingTopic"),
            ("another app", Self.token, ["apns-topic": "com.other.app.push-type.liveactivity"], FakeAPNsClient.aps(), 400, "TopicDisallowed"),
            ("liveactivity without its topic", Self.token, ["apns-topic": apns.bundleID], FakeAPNsClient.aps(), 400, "InvalidPushType"),
            ("unknown push type", Self.token, ["apns-push-type": "banner"], FakeAPNsClient.aps(), 400, "InvalidPushType"),
            ("priority 7", Self.token, ["apns-priority": "7"], FakeAPNsClient.aps(), 400, "BadPriority"),
            ("expiration not a number", Self.token, ["apns-expiration": "soon"], FakeAPNsClient.aps(), 400, "BadExpirationDate"),
            ("long collapse id", Self.token, ["apns-collapse-id": String(repeating: "c", count: 65)], FakeAPNsClient.aps(), 400, "BadCollapseId"),
            ("apns-id not a UUID", Self.token, ["apns-id": "42"], FakeAPNsClient.aps(), 400, "BadMessageId"),
            ("empty body", Self.token, [:], "", 400, "PayloadEmpty"),
            ("no event", Self.token, [:], #"{"aps":{"timestamp":1}}"#, 400, "BadPayload"),
            ("too large", Self.token, [:], FakeAPNsClient.aps(extra: #","pad":"\#(String(repeating: "x", count: 4100))""#), 413, "PayloadTooLarge"),
        ]
        for (name, token, changes, body, status, reason) in cases {
            let answer = try await client.push(token, headers: try client.liveActivityHeaders(changes), body: body)
            #expect(answer.status == status, "\(name)")
            #expect(answer.reason == reason, "\(name)")
        }
        let get = try await client.send(.get, "/3/device/\(Self.token)", headers: try client.liveActivityHeaders())
        #expect(get.status == 405 && get.reason == "MethodNotAllowed")
        let unknown = try await client.send(.post, "/2/device/\(Self.token)", headers: try client.liveActivityHeaders())
        #expect(unknown.status == 404 && unknown.reason == "BadPath")
        // A given apns-id comes back.
        let id = UUID().uuidString.lowercased()
        let named = try await client.push(Self.token, headers: try client.liveActivityHeaders(["apns-id": id]))
        #expect(named.status == 200 && named.headers["apns-id"] == id)
    }

    @Test func faultRulesAnswerApplesErrors() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let gone = String(repeating: "cd34", count: 16)
        try await apns.control.fault([
            ["token": gone, "status": 410, "reason": "Unregistered", "timestamp": 1_760_000_000_000] as [String: Any],
            ["endpoint": "device", "status": 429, "reason": "TooManyRequests", "retryAfter": 7, "nextRequests": 1],
        ])
        let unregistered = try await client.push(gone)
        #expect(unregistered.status == 410)
        #expect(unregistered.reason == "Unregistered")
        #expect(unregistered.json["timestamp"] as? Int == 1_760_000_000_000)
        let limited = try await client.push(Self.token)
        #expect(limited.status == 429 && limited.reason == "TooManyRequests")
        #expect(limited.headers["Retry-After"] == "7")
        #expect(try await client.push(Self.token).status == 200, "nextRequests 1 is spent")

        // A dropped backend connection reaches the client as nghttpx's 502.
        try await apns.control.fault(["dropConnections": 1])
        #expect(try await client.push(Self.token).status == 502)
        #expect(try await client.push(Self.token).status == 200)

        let refused = try await apns.control.json("POST", "/fake/faults", ["status": 429, "nextRequests": 1])
        #expect(refused.status == 400 && refused.text.contains("reason"))
        let badEndpoint = try await apns.control.json("POST", "/fake/faults", ["status": 500, "reason": "InternalServerError", "nextRequests": 1, "endpoint": "send"])
        #expect(badEndpoint.status == 400)
        try await apns.clearFaults()
        #expect(try await client.push(gone).status == 200)
    }
}
