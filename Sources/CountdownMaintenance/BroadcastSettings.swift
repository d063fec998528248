import Configuration
import CountdownDomain

/// `APNS_BROADCAST`, `APNS_CHANNEL_URL`, `APNS_BROADCAST_MAX_CHANNELS` (SPEC 12.5): whether iOS 18+ activities are
/// updated and ended through a broadcast channel per stream, where Apple's channel management API is, and how many
/// channels may be alive at once (Apple allows 10,000 per app and environment; past the limit, token pushes).
public struct BroadcastSettings: Sendable, Equatable {
    /// Apple's limit of channels per app and environment (`CannotCreateChannelConfig` past it).
    public static let appleChannelLimit = 10_000

    public var enabled = false
    public var channelURL = BroadcastSettings.productionChannelURL
    public var maxChannels = 9000

    public static let productionChannelURL = "https://api-manage-broadcast.push.apple.com:2196"
    public static let developmentChannelURL = "https://api-manage-broadcast.sandbox.push.apple.com:2195"

    /// Reads the three variables; `on` needs `PUSH_TRANSPORT=apns` (broadcast is APNs' own API: FCM cannot carry it).
    static func load(_ env: Environment, transport: PushTransportKind, environment: CountdownConfig.APNsEnvironment,
                     into problems: inout [ConfigError]) -> BroadcastSettings {
        func read<T>(_ body: () throws -> T, default fallback: T) -> T { ConfigProblems.reading(body, into: &problems) ?? fallback }
        let defaults = BroadcastSettings()
        let mode = read({ try env.choice("APNS_BROADCAST", default: OnOff.off) }, default: .off)
        if mode == .on && transport != .apns {
            problems.append(ConfigError(.invalid, variable: "APNS_BROADCAST", problem:
                "on requires PUSH_TRANSPORT=apns (broadcast channels are APNs' own API), got PUSH_TRANSPORT=\(transport.rawValue)"))
        }
        let url = environment == .production ? productionChannelURL : developmentChannelURL
        return BroadcastSettings(
            enabled: mode == .on,
            channelURL: read({ try env.url("APNS_CHANNEL_URL", schemes: ["http", "https"], default: url) }, default: url),
            maxChannels: read({ try env.integer("APNS_BROADCAST_MAX_CHANNELS", default: defaults.maxChannels, range: 1...appleChannelLimit) },
                              default: defaults.maxChannels))
    }
}
