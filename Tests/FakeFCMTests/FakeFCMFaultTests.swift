import Foundation
import Testing
import TestSupport

@Suite struct FakeFCMFaultTests {
    /// A running fake, a client and a live access token.
    struct Setup {
        let fake: FakeFCMProcess
        let client: FakeFCMClient
        let token: String

        init(connections: Int = 8) async throws {
            fake = try FakeFCMProcess()
            client = FakeFCMClient(fake, connections: connections)
            token = try await client.accessToken(for: fake)
        }

        func send(_ message: [String: Any] = Messages.reminder()) async throws -> FakeFCMClient.Answer {
            try await client.send(message, bearer: token, project: fake.project)
        }

        func fault(_ rule: Any) async throws { try await client.fault(rule) }
    }

    static func errorCode(_ answer: FakeFCMClient.Answer) -> String? {
        let details = (answer.json["error"] as? [String: Any])?["details"] as? [[String: Any]]
        return details?.first { $0["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError" }?["errorCode"] as? String
    }

    @Test func tokenRuleFailsThatTokenUntilCleared() async throws {
        let setup = try await Setup()
        try await setup.fault(["token": "dead-token", "status": 404, "errorCode": "UNREGISTERED"])
        try await setup.fault(["token": "dead-activity", "status": 404])
        for _ in 0..<2 {
            let dead = try await setup.send(Messages.reminder(token: "dead-token"))
            #expect(dead.status == 404)
            #expect((dead.json["error"] as? [String: Any])?["status"] as? String == "NOT_FOUND")
            #expect(Self.errorCode(dead) == "UNREGISTERED")
        }
        let deadActivity = try await setup.send(Messages.liveActivity(event: "end", token: "alive", activityToken: "dead-activity"))
        #expect(deadActivity.status == 404)
        #expect(Self.errorCode(deadActivity) == "UNREGISTERED")
        #expect(try await setup.send(Messages.reminder(token: "alive")).status == 200)

        #expect(try await setup.client.call("DELETE", "/fake/faults").status == 204)
        #expect(try await setup.send(Messages.reminder(token: "dead-token")).status == 200)
        let stats = try await setup.client.call("GET", "/fake/stats").json
        #expect(stats["byErrorCode"] as? [String: Int] == ["UNREGISTERED": 3])
        #expect(stats["accepted"] as? Int == 2)
        #expect(try await setup.client.call("GET", "/fake/messages").array.count == 2)
    }

    @Test func nextRequestsFailThenRecover() async throws {
        let setup = try await Setup()
        try await setup.fault(["nextRequests": 2, "status": 503, "errorCode": "UNAVAILABLE"])
        for _ in 0..<2 {
            let failed = try await setup.send()
            #expect(failed.status == 503)
            #expect((failed.json["error"] as? [String: Any])?["status"] as? String == "UNAVAILABLE")
            #expect(Self.errorCode(failed) == "UNAVAILABLE")
        }
        #expect(try await setup.send().status == 200)
    }

    @Test func quotaWindowSendsRetryAfterAndEnds() async throws {
        let setup = try await Setup()
        try await setup.fault(["status": 429, "errorCode": "QUOTA_EXCEEDED", "retryAfter": 5, "forSeconds": 10])
        let limited = try await setup.send()
        #expect(limited.status == 429)
        #expect(limited.headers["retry-after"] == "5")
        #expect((limited.json["error"] as? [String: Any])?["status"] as? String == "RESOURCE_EXHAUSTED")
        #expect(Self.errorCode(limited) == "QUOTA_EXCEEDED")
        #expect(try await setup.send().status == 429)
        // A window of 10 s: long enough that both sends fall in it on a loaded machine (4 s was not, at load 30),
        // short enough to wait out.
        try await waitUntil(timeout: .seconds(30), every: .milliseconds(100), "the quota window to close") {
            try await setup.send().status == 200
        }
    }

    @Test func forcedUnauthorizedLooksLikeAnExpiredToken() async throws {
        let setup = try await Setup()
        try await setup.fault(["status": 401, "nextRequests": 1])
        let refused = try await setup.send()
        #expect(refused.status == 401)
        #expect((refused.json["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
        #expect(Self.errorCode(refused) == nil)
        #expect(try await setup.send().status == 200)
    }

    @Test func droppedConnectionsGetNoAnswer() async throws {
        let setup = try await Setup()
        try await setup.fault(["dropConnections": 2])
        for _ in 0..<2 {
            // A fresh connection each time: on a reused one, the client library retries (or stalls) on its own.
            let fresh = FakeFCMClient(setup.fake)
            await #expect(throws: (any Error).self) { _ = try await fresh.send(Messages.reminder(), bearer: setup.token, project: setup.fake.project) }
        }
        #expect(try await setup.send().status == 200)
        let stats = try await setup.client.call("GET", "/fake/stats").json
        #expect(stats["dropped"] as? Int == 2)
        #expect(stats["accepted"] as? Int == 1)
    }

    @Test func latencyDelaysSendsWithoutBlockingOthers() async throws {
        let setup = try await Setup(connections: 40)
        // A latency well apart from the quick answers below, so a stall of this machine cannot blur the two.
        try await setup.fault(["latencyMs": 1500])
        let clock = ContinuousClock()
        let started = clock.now
        // 40 sends at 1.5 s each would take 60 s one after another; they overlap instead.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<40 { group.addTask { try await setup.send(Messages.reminder(token: "token-\(n)")).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let elapsed = clock.now - started
        #expect(statuses == Array(repeating: 200, count: 40))
        #expect(elapsed >= .milliseconds(1500))
        #expect(elapsed < .seconds(10), "took \(elapsed)")

        let statsStarted = clock.now
        #expect(try await setup.client.call("GET", "/fake/stats").status == 200)
        #expect(clock.now - statsStarted < .seconds(1), "the control endpoints are never delayed")

        try await setup.fault(["latencyMs": 0])
        let quick = clock.now
        #expect(try await setup.send().status == 200)
        #expect(clock.now - quick < .seconds(1), "latency 0 removes it")
    }

    @Test func faultsAreListedAndBadRulesRefused() async throws {
        let setup = try await Setup()
        let added = try await setup.client.json("POST", "/fake/faults", [
            ["token": "t1", "status": 404], ["latencyMs": 5], ["dropConnections": 1],
        ])
        #expect(added.status == 200)
        #expect(added.json["latencyMs"] as? Int == 5)
        #expect(added.json["dropConnections"] as? Int == 1)
        #expect((added.json["failures"] as? [[String: Any]])?.first?["errorCode"] as? String == "UNREGISTERED")

        for bad: Any in [
            ["status": 503], ["status": 200, "nextRequests": 1], ["latencyMs": 5, "status": 503, "nextRequests": 1],
            ["dropConnections": 0], ["nextRequests": 1], [["latencyMs": 1], ["status": 999, "token": "x"]],
        ] {
            let refused = try await setup.client.json("POST", "/fake/faults", bad)
            #expect(refused.status == 400, "\(bad)")
            #expect((refused.json["error"] as? String)?.isEmpty == false)
        }
        #expect(try await setup.client.call("POST", "/fake/faults", body: Data("nope".utf8)).status == 400)
        // An invalid batch applies nothing.
        #expect(try await setup.client.call("GET", "/fake/faults").json["latencyMs"] as? Int == 5)
    }
}
