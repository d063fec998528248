/// The API's protective limits: how long a request may take and how many writes a user or an address may
/// send. Per process: with several replicas behind a load balancer each enforces its own share.
public struct APIPolicy: Sendable {
    /// From a complete request to its answer; past it the answer is `503` with `Retry-After`
    /// (`API_REQUEST_TIMEOUT_SECONDS`).
    public var requestTimeout: Duration
    /// Writes (POST, DELETE) a minute per authenticated user, in bursts of as many; nil: unlimited
    /// (`API_WRITES_PER_MINUTE_PER_USER`).
    public var writesPerMinutePerUser: Int?
    /// Writes a minute per client address, in bursts of as many; nil: unlimited (`API_WRITES_PER_MINUTE_PER_IP`).
    public var writesPerMinutePerIP: Int?
    /// Unauthenticated device registrations a minute in all (every address together), in bursts of as many; nil:
    /// unlimited (`API_ANONYMOUS_WRITES_PER_MINUTE`). Bounds the rows anonymous clients can create however many
    /// addresses they use.
    public var anonymousWritesPerMinute: Int? = defaultAnonymousWritesPerMinute
    /// Proxies whose `X-Forwarded-For` names the client address (`API_TRUSTED_PROXIES`).
    public var trustedProxies = TrustedProxies.none
    /// Whether the workers run broadcast channels (`APNS_BROADCAST=on`): otherwise the channel endpoint answers 404.
    public var broadcastChannels = false

    public static let defaultRequestTimeout = Duration.seconds(10)
    public static let defaultWritesPerMinutePerUser = 120
    public static let defaultWritesPerMinutePerIP = 1200
    public static let defaultAnonymousWritesPerMinute = 3000

    public init(
        requestTimeout: Duration = defaultRequestTimeout, writesPerMinutePerUser: Int? = defaultWritesPerMinutePerUser,
        writesPerMinutePerIP: Int? = defaultWritesPerMinutePerIP
    ) {
        self.requestTimeout = requestTimeout
        self.writesPerMinutePerUser = writesPerMinutePerUser
        self.writesPerMinutePerIP = writesPerMinutePerIP
    }
}
