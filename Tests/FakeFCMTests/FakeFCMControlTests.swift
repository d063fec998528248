import Foundation
import Testing
import TestSupport

/// What a push client's tests steer and read on the fake: token endpoint faults, revoked tokens, the requests as
/// received, error details FCM sends (a field violation, `Retry-After` as a date).
@Suite struct FakeFCMControlTests {
    typealias Setup = FakeFCMFaultTests.Setup

    @Test func tokenEndpointFaultsFailAndDelayTokenRequests() async throws {
        let setup = try await Setup()
        try await setup.fault(["tokenStatus": 503, "nextRequests": 1])
        let outage = try await setup.client.exchange(assertion: try Assertion.sign(for: setup.fake))
        #expect(outage.status == 503)
        #expect(outage.json["error"] as? String == "internal_failure")
        #expect(try await setup.client.exchange(assertion: try Assertion.sign(for: setup.fake)).status == 200)

        try await setup.fault(["tokenStatus": 400])
        for _ in 0..<2 {
            let refused = try await setup.client.exchange(assertion: try Assertion.sign(for: setup.fake))
            #expect(refused.status == 400)
            #expect(refused.json["error"] as? String == "invalid_grant")
        }
        let stats = try await setup.client.call("GET", "/fake/stats").json
        #expect(stats["tokensRefused"] as? Int == 3)
        #expect(try await setup.send().status == 200, "sends are not affected")

        _ = try await setup.client.call("DELETE", "/fake/faults")
        try await setup.fault(["tokenLatencyMs": 300])
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try await setup.client.exchange(assertion: try Assertion.sign(for: setup.fake)).status == 200)
        #expect(clock.now - started >= .milliseconds(300))
        #expect(try await setup.client.call("GET", "/fake/faults").json["tokenLatencyMs"] as? Int == 300)
    }

    @Test func revokedAccessTokensAreRefused() async throws {
        let setup = try await Setup()
        #expect(try await setup.send().status == 200)
        try await setup.client.revokeTokens()
        let refused = try await setup.send()
        #expect(refused.status == 401)
        #expect((refused.json["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
        let fresh = try await setup.client.accessToken(for: setup.fake)
        #expect(try await setup.client.send(Messages.reminder(), bearer: fresh, project: setup.fake.project).status == 200)
    }

    @Test func requestsAreKeptAsReceivedWithTheirAnswers() async throws {
        let fake = try FakeFCMProcess(arguments: ["--keep-requests", "2"])
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        for n in 0..<3 {
            _ = try await client.send(Messages.reminder(token: "device-\(n)"), bearer: token, project: fake.project)
        }
        let requests = try await client.requests()
        #expect(requests.map(\.kind) == ["token", "send", "send"], "two sends kept, and the token request beside them")
        #expect(requests.map(\.seq) == [1, 3, 4])
        let grant = try #require(requests.first)
        #expect(grant.method == "POST" && grant.path == "/token" && grant.status == 200)
        #expect(grant.body.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
        #expect(grant.answer.contains(token))
        let send = try #require(requests.last)
        #expect(send.path == "/v1/projects/\(fake.project)/messages:send")
        #expect(send.headers["authorization"] == "Bearer \(token)")
        #expect(send.headers["content-type"] == "application/json")
        #expect(send.body.contains("device-2"))
        #expect(send.status == 200 && send.answer.contains("messages/fake-3"))

        #expect(try await client.requests(kind: "token").count == 1)
        #expect(try await client.requests(kind: "send").map(\.seq) == [3, 4])
        #expect(try await client.call("GET", "/fake/requests?kind=other").status == 400)
        #expect(try await client.call("DELETE", "/fake/requests").status == 204)
        #expect(try await client.requests().isEmpty)
    }

    @Test func failuresCanNameTheBadFieldAndSendRetryAfterAsADate() async throws {
        let setup = try await Setup()
        try await setup.fault([
            ["token": "malformed", "status": 400, "message": "The registration token is not a valid FCM registration token",
             "violationField": "message.token"],
            ["token": "limited", "status": 429, "retryAfter": 30, "retryAfterFormat": "date"],
        ])
        let invalid = try await setup.send(Messages.reminder(token: "malformed"))
        #expect(invalid.status == 400)
        let details = try #require((invalid.json["error"] as? [String: Any])?["details"] as? [[String: Any]])
        let violations = details.first { $0["@type"] as? String == "type.googleapis.com/google.rpc.BadRequest" }?["fieldViolations"]
        #expect((violations as? [[String: String]])?.first?["field"] == "message.token")

        let limited = try await setup.send(Messages.reminder(token: "limited"))
        #expect(limited.status == 429)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = try #require(formatter.date(from: limited.headers["retry-after"] ?? ""), "\(limited.headers)")
        #expect(date.timeIntervalSinceNow > 20 && date.timeIntervalSinceNow <= 31)

        for bad: Any in [
            ["tokenStatus": 200], ["tokenStatus": 503, "token": "t"], ["tokenLatencyMs": 5, "tokenStatus": 503],
            ["status": 429, "nextRequests": 1, "retryAfterFormat": "date"], ["status": 429, "nextRequests": 1, "retryAfter": 1, "retryAfterFormat": "http"],
            ["status": 400, "nextRequests": 1, "violationField": ""], ["tokenLatencyMs": 70_000],
        ] {
            #expect(try await setup.client.json("POST", "/fake/faults", bad).status == 400, "\(bad)")
        }
    }
}
