import Configuration
import CountdownAPI
import Testing

@Suite("countdown-api configuration")
struct APIConfigTests {
    static let base = ["DATABASE_URL": "postgres://u@127.0.0.1:5432/db", "API_JWT_SECRET": String(repeating: "s", count: 32)]

    static func load(_ values: [String: String]) throws -> APIConfig {
        try APIConfig.load(from: Environment(base.merging(values) { $1 }))
    }

    static func problems(_ values: [String: String]) -> [String] {
        do {
            _ = try load(values)
            return []
        } catch let error as ConfigProblems {
            return error.problems.map(\.variable)
        } catch {
            return ["? \(error)"]
        }
    }

    @Test func trustedProxiesAreCheckedNamingTheVariable() throws {
        #expect(Self.problems([:]).isEmpty)
        #expect(Self.problems(["API_TRUSTED_PROXIES": "10.0.0.0/33"]) == ["API_TRUSTED_PROXIES"])
        #expect(Self.problems(["API_TRUSTED_PROXIES": "example.com"]) == ["API_TRUSTED_PROXIES"])
        #expect(try Self.load(["API_TRUSTED_PROXIES": "10.0.0.0/8, ::1"]).policy.trustedProxies == TrustedProxies(parsing: "10.0.0.0/8, ::1"))
        #expect(try Self.load([:]).policy.trustedProxies == .none)
    }

    @Test func broadcastIsOnOrOff() throws {
        #expect(Self.problems(["APNS_BROADCAST": "maybe"]) == ["APNS_BROADCAST"])
        #expect(try Self.load(["APNS_BROADCAST": "ON"]).policy.broadcastChannels)
        #expect(try !Self.load(["APNS_BROADCAST": "off"]).policy.broadcastChannels)
        #expect(try !Self.load([:]).policy.broadcastChannels)
    }

    @Test func aBadBroadcastSwitchNamesTheChoices() {
        #expect(throws: ConfigProblems.self) { try Self.load(["APNS_BROADCAST": "maybe"]) }
        do {
            _ = try Self.load(["APNS_BROADCAST": "maybe"])
        } catch {
            #expect("\(error)".contains("APNS_BROADCAST") && "\(error)".contains("must be one of off, on, got \"maybe\""), "\(error)")
        }
    }

    @Test func thePeerAddressLosesItsPort() {
        #expect(TrustedProxies.address(ofPeer: "10.1.2.3:5000") == "10.1.2.3")
        #expect(TrustedProxies.address(ofPeer: "[fd00::1]:5000") == "fd00::1")
        #expect(TrustedProxies.address(ofPeer: "fd00::1") == "fd00::1")
        #expect(TrustedProxies.address(ofPeer: "10.1.2.3") == "10.1.2.3")
    }
}
