/// Direct APNs token-based auth settings (`APNS_*`).
public struct APNsConfiguration: Sendable, Equatable {
    public enum Environment: String, Sendable, Equatable {
        case production, development

        public var baseURL: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .development: "https://api.sandbox.push.apple.com"
            }
        }
    }

    /// Path of the `.p8` signing key (`APNS_KEY_FILE`).
    public var keyFile: String
    /// The key's 10-character id (`APNS_KEY_ID`), the provider token's `kid`.
    public var keyID: String
    /// The team id (`APNS_TEAM_ID`), the provider token's `iss`.
    public var teamID: String
    /// The app's bundle id (`APNS_BUNDLE_ID`).
    public var bundleID: String
    public var environment: Environment
    /// Overrides the environment's URL (`APNS_BASE_URL`), e.g. for a local fake.
    public var baseURLOverride: String?
    public var requestTimeout: Duration

    public init(
        keyFile: String, keyID: String, teamID: String, bundleID: String, environment: Environment = .production,
        baseURLOverride: String? = nil, requestTimeout: Duration = .seconds(10)
    ) {
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
        self.bundleID = bundleID
        self.environment = environment
        self.baseURLOverride = baseURLOverride
        self.requestTimeout = requestTimeout
    }

    public var baseURL: String {
        var base = baseURLOverride ?? environment.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// `apns-topic` for Live Activity pushes.
    public var liveActivityTopic: String { "\(bundleID).push-type.liveactivity" }
}
