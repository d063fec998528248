@testable import CountdownAPI
import Foundation
import Testing

@Suite("Write limits per user and per client address")
struct WriteLimitTests {
    func api(_ policy: APIPolicy) throws -> (TestAPI, InMemoryAPIStore) {
        let store = InMemoryAPIStore()
        store.state.withLock { $0.users = ["u1", "u2"] }
        return (try TestAPI(store: store, policy: policy), store)
    }

    func register(_ api: TestAPI, as user: String? = nil, from address: String = "203.0.113.9:5000", forwardedFor: String...) async throws
        -> TestAPI.Reply {
        await api.send("POST", "/notifications/device-token", json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID()],
                       bearer: try user.map { try api.token($0) }, headers: forwardedFor.map { ("X-Forwarded-For", $0) },
                       from: address)
    }

    @Test func eachUserHasABudgetAndA429SaysWhenToComeBack() async throws {
        let (api, _) = try api(APIPolicy(writesPerMinutePerUser: 2, writesPerMinutePerIP: nil))
        #expect(try await register(api, as: "u1").succeeded)
        #expect(try await register(api, as: "u1").succeeded)
        let limited = try await register(api, as: "u1")
        #expect(limited.status == 429)
        #expect(limited.errorCode == "rate_limited")
        // One write every 30 s: the wait is what is left of it, 30 s less the time the two writes took.
        #expect((1...30).contains(Int(limited.headers["Retry-After"] ?? "") ?? 0), "\(limited.headers["Retry-After"] ?? "none")")
        #expect(try await register(api, as: "u2").succeeded, "another user is not affected")
        #expect(try await register(api).succeeded, "anonymous writes count per address only")
        #expect(api.metric("countdown_api_rate_limited_total") == 1)
    }

    @Test func behindATrustedProxyTheForwardedClientIsCounted() async throws {
        var policy = APIPolicy(writesPerMinutePerUser: nil, writesPerMinutePerIP: 1)
        policy.trustedProxies = try TrustedProxies(parsing: "10.0.0.0/8, fd00::/8")
        let (api, _) = try api(policy)
        // Two clients behind the same load balancer each get their own budget.
        #expect(try await register(api, from: "10.1.2.3:4000", forwardedFor: "198.51.100.1").succeeded)
        #expect(try await register(api, from: "10.1.2.3:4001", forwardedFor: "198.51.100.2").succeeded)
        #expect(try await register(api, from: "10.1.2.4:4000", forwardedFor: "198.51.100.1").status == 429)
        // A client cannot pick its own address: entries left of the last untrusted hop are ignored.
        #expect(try await register(api, from: "10.1.2.3:4000", forwardedFor: "192.0.2.77, 198.51.100.2").status == 429)
        // An untrusted peer's header is ignored altogether.
        #expect(try await register(api, from: "203.0.113.5:1", forwardedFor: "192.0.2.1").succeeded)
        #expect(try await register(api, from: "203.0.113.5:2", forwardedFor: "192.0.2.2").status == 429)
        #expect(try await register(api, from: "[fd00::7]:443", forwardedFor: "2001:db8::1, fd00::8").succeeded)
    }

    @Test func anonymousRegistrationsAreLimitedForEveryAddressTogether() async throws {
        var policy = APIPolicy(writesPerMinutePerUser: nil, writesPerMinutePerIP: 100)
        policy.anonymousWritesPerMinute = 2
        let (api, _) = try api(policy)
        #expect(try await register(api, from: "203.0.113.1:1").succeeded)
        #expect(try await register(api, from: "203.0.113.2:1").succeeded)
        let limited = try await register(api, from: "203.0.113.3:1")
        #expect(limited.status == 429, "a third address does not get a budget of its own")
        #expect(limited.errorCode == "rate_limited")
        #expect(limited.headers["Retry-After"] != nil)
        #expect(try await register(api, as: "u1", from: "203.0.113.3:1").succeeded, "signed-in registrations are not counted")
    }

    @Test func everyForwardedForLineIsReadAsOneList() async throws {
        var policy = APIPolicy(writesPerMinutePerUser: nil, writesPerMinutePerIP: 2)
        policy.trustedProxies = try TrustedProxies(parsing: "10.0.0.0/8")
        let (api, _) = try api(policy)
        // The client sends a line of its own; the proxy appends the real address as a second line.
        for forged in ["192.0.2.1", "192.0.2.2"] {
            #expect(try await register(api, from: "10.1.2.3:4000", forwardedFor: forged, "198.51.100.7").succeeded)
        }
        let third = try await register(api, from: "10.1.2.3:4000", forwardedFor: "192.0.2.3", "198.51.100.7")
        #expect(third.status == 429, "the right-most untrusted address of all lines is counted, not the client's own line")
        #expect(try await register(api, from: "10.1.2.3:4000", forwardedFor: "198.51.100.8", "10.9.9.9").succeeded,
                "trusted hops on the last line are skipped")
    }

    @Test func trustedProxyRangesParse() throws {
        let proxies = try TrustedProxies(parsing: " 10.0.0.0/8 ,192.168.1.7, fd00::/8")
        #expect(proxies.isTrusted("10.255.0.1"))
        #expect(proxies.isTrusted("192.168.1.7"))
        #expect(!proxies.isTrusted("192.168.1.8"))
        #expect(proxies.isTrusted("fd12::1"))
        #expect(!proxies.isTrusted("2001:db8::1"))
        #expect(!proxies.isTrusted("not-an-address"))
        #expect(throws: (any Error).self) { try TrustedProxies(parsing: "10.0.0.0/33") }
        #expect(throws: (any Error).self) { try TrustedProxies(parsing: "example.com") }
        #expect(try TrustedProxies(parsing: "") == .none)
    }
}
