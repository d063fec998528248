import Configuration
@testable import CountdownMaintenance
import Testing

/// SPEC 12.5: `APNS_BROADCAST` (off by default; on only with `PUSH_TRANSPORT=apns`), `APNS_CHANNEL_URL` and
/// `APNS_BROADCAST_MAX_CHANNELS`, each refusal naming its variable.
@Suite struct BroadcastConfigTests {
    let base = ["DATABASE_URL": "postgres://u:p@localhost:5432/db", "REDIS_URL": "redis://localhost:6379/0", "PUSH_TRANSPORT": "log"]

    /// The problems loading `env` reports; nil when it loads.
    static func problems(_ env: [String: String]) -> ConfigProblems? {
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            return nil
        } catch {
            return error as? ConfigProblems
        }
    }

    @Test func offByDefault() throws {
        let settings = try CountdownConfig.load(from: Environment(base)).broadcast
        #expect(settings == BroadcastSettings(enabled: false, channelURL: BroadcastSettings.productionChannelURL, maxChannels: 9000))
    }

    @Test func onNeedsTheAPNsTransport() {
        for transport in ["log", "fcm"] {
            var env = base
            env["PUSH_TRANSPORT"] = transport
            env["GOOGLE_APPLICATION_CREDENTIALS"] = "/nonexistent/sa.json"
            env["APNS_BROADCAST"] = "on"
            let refused = Self.problems(env)
            #expect(refused?.problems.map(\.variable).contains("APNS_BROADCAST") == true, "PUSH_TRANSPORT=\(transport)")
            #expect(refused?.description.contains("PUSH_TRANSPORT=apns") == true)
        }
    }

    @Test func channelURLAndLimitAreValidated() {
        for (name, value) in [("APNS_BROADCAST", "yes"), ("APNS_BROADCAST_MAX_CHANNELS", "0"), ("APNS_BROADCAST_MAX_CHANNELS", "10001"),
                              ("APNS_BROADCAST_MAX_CHANNELS", "many"), ("APNS_CHANNEL_URL", "ftp://example.com")] {
            var bad = base
            bad[name] = value
            #expect(Self.problems(bad)?.problems.map(\.variable) == [name], "\(name)=\(value)")
        }
        var tuned = base
        tuned["APNS_CHANNEL_URL"] = "https://127.0.0.1:8443"
        tuned["APNS_BROADCAST_MAX_CHANNELS"] = "10000"
        let settings = try? CountdownConfig.load(from: Environment(tuned)).broadcast
        #expect(settings?.channelURL == "https://127.0.0.1:8443" && settings?.maxChannels == 10_000)
    }
}
