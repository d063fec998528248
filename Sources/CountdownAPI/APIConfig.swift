import Configuration
import Foundation
import JWT
import Postgres
import Telemetry

/// What `countdown-api` reads from the environment, validated at start: every problem is reported, one line
/// each, naming the variable.
public struct APIConfig: Sendable {
    public var databaseURL: String
    public var address: String
    /// `/metrics` listens here, never on the public `address` (`API_METRICS_ADDR`).
    public var metricsAddress = "0.0.0.0:9091"
    /// How bearer tokens are verified (`API_JWT_*`): a fixed key (at most one of `API_JWT_SECRET` and
    /// `API_JWT_PUBLIC_KEY_FILE`), `API_JWT_KEYS` (further keys, or all of them), issuer, audience, lifetime.
    public var jwt: JWTSettings
    /// Statement and lock timeouts of every PostgreSQL session (`DATABASE_STATEMENT_TIMEOUT_MS`,
    /// `DATABASE_LOCK_TIMEOUT_MS`; 0 turns one off).
    public var statementTimeoutMilliseconds = 30_000
    public var lockTimeoutMilliseconds = 5_000
    /// Request deadline and write limits.
    public var policy = APIPolicy()
    /// A request's headers and body must have arrived within this long (`API_REQUEST_READ_TIMEOUT_SECONDS`).
    public var requestReadTimeout: Duration = .seconds(10)
    /// Simultaneous connections from one address (`API_MAX_CONNECTIONS_PER_IP`).
    public var connectionsPerIP = 64
    /// Simultaneous connections in all (`API_MAX_CONNECTIONS`); lowered at start to what the descriptor limit
    /// leaves (`DescriptorBudget`).
    public var maxConnections = 4096
    /// Devices without a user that never got one are deleted after this many hours untouched
    /// (`API_OWNERLESS_DEVICE_TTL_HOURS`; 0: never).
    public var ownerlessDeviceTTLHours = OwnerlessDeviceSweeper.defaultTTLHours
    public var logger: Logger
    public var shutdownGraceSeconds: Int
    /// PostgreSQL connections the API keeps at most (`API_DATABASE_CONNECTIONS`).
    public var databaseConnections = 16
    /// Event-loop threads of the HTTP server (`API_HTTP_THREADS`).
    public var httpThreads = 4

    public init(databaseURL: String, address: String, jwt: JWTSettings, logger: Logger, shutdownGraceSeconds: Int) {
        self.databaseURL = databaseURL
        self.address = address
        self.jwt = jwt
        self.logger = logger
        self.shutdownGraceSeconds = shutdownGraceSeconds
    }

    /// Reads and checks every variable.
    /// - Throws: `ConfigProblems` listing each problem.
    public static func load(from env: Environment = Environment()) throws -> APIConfig {
        var problems: [ConfigError] = []
        func read<T>(_ body: () throws -> T) -> T? { ConfigProblems.reading(body, into: &problems) }
        let databaseURL = read { try env.url("DATABASE_URL", schemes: ["postgres", "postgresql"]) }
        let address = read { try env.address("API_ADDR", default: "0.0.0.0:8080") }
        let metricsAddress = read { try env.address("API_METRICS_ADDR", default: "0.0.0.0:9091") }
        let jwt = JWTSettings.load(from: env, prefix: "API_JWT", problems: &problems)
        let statementTimeout = read { try env.integer("DATABASE_STATEMENT_TIMEOUT_MS", default: 30_000, range: 0...3_600_000) }
        let lockTimeout = read { try env.integer("DATABASE_LOCK_TIMEOUT_MS", default: 5_000, range: 0...3_600_000) }
        let requestTimeout = read { try env.integer("API_REQUEST_TIMEOUT_SECONDS", default: 10, range: 1...300) }
        let readTimeout = read { try env.integer("API_REQUEST_READ_TIMEOUT_SECONDS", default: 10, range: 1...300) }
        let perIP = read { try env.integer("API_MAX_CONNECTIONS_PER_IP", default: 64, range: 1...100_000) }
        let ownerlessTTL = read {
            try env.integer("API_OWNERLESS_DEVICE_TTL_HOURS", default: OwnerlessDeviceSweeper.defaultTTLHours, range: 0...87_600)
        }
        let anonymous = read {
            try env.integer("API_ANONYMOUS_WRITES_PER_MINUTE", default: APIPolicy.defaultAnonymousWritesPerMinute, range: 0...10_000_000)
        }
        let maxConnections = read { try env.integer("API_MAX_CONNECTIONS", default: 4096, range: DescriptorBudget.minimumConnections...1_000_000) }
        let perUser = read {
            try env.integer("API_WRITES_PER_MINUTE_PER_USER", default: APIPolicy.defaultWritesPerMinutePerUser, range: 0...1_000_000)
        }
        let perAddress = read {
            try env.integer("API_WRITES_PER_MINUTE_PER_IP", default: APIPolicy.defaultWritesPerMinutePerIP, range: 0...10_000_000)
        }
        let proxies = read { try TrustedProxies.load("API_TRUSTED_PROXIES", from: env) }
        let grace = read { try env.integer("SHUTDOWN_GRACE_SECONDS", default: 25, range: 0...3600) }
        let connections = read { try env.integer("API_DATABASE_CONNECTIONS", default: 16, range: 1...256) }
        let threads = read { try env.integer("API_HTTP_THREADS", default: 4, range: 1...64) }
        let broadcast = read { try env.choice("APNS_BROADCAST", default: OnOff.off) == .on }
        let level = read { try env.logLevel() }
        let format = read { try env.logFormat() }
        let logger = level.flatMap { level in format.map { Logger(level: level, format: $0) } }
        guard problems.isEmpty, let databaseURL, let address, let metricsAddress, let jwt, let grace, let logger, let connections,
            let threads, let statementTimeout, let lockTimeout, let requestTimeout, let readTimeout, let perIP, let perUser,
            let perAddress, let proxies, let maxConnections, let ownerlessTTL, let anonymous
        else {
            throw ConfigProblems(problems: problems)
        }
        var config = APIConfig(databaseURL: databaseURL, address: address, jwt: jwt, logger: logger, shutdownGraceSeconds: grace)
        config.databaseConnections = connections
        config.httpThreads = threads
        config.metricsAddress = metricsAddress
        config.statementTimeoutMilliseconds = statementTimeout
        config.lockTimeoutMilliseconds = lockTimeout
        config.policy = APIPolicy(
            requestTimeout: .seconds(requestTimeout), writesPerMinutePerUser: perUser > 0 ? perUser : nil,
            writesPerMinutePerIP: perAddress > 0 ? perAddress : nil)
        config.policy.trustedProxies = proxies
        config.policy.broadcastChannels = broadcast ?? false
        config.policy.anonymousWritesPerMinute = anonymous > 0 ? anonymous : nil
        config.requestReadTimeout = .seconds(readTimeout)
        config.connectionsPerIP = perIP
        config.maxConnections = maxConnections
        config.ownerlessDeviceTTLHours = ownerlessTTL
        return config
    }

    /// The PostgreSQL configuration of `DATABASE_URL` with the session timeouts applied.
    public func databaseConfiguration() throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: databaseURL)
        configuration.setTimeouts(statementMilliseconds: statementTimeoutMilliseconds, lockMilliseconds: lockTimeoutMilliseconds)
        return configuration
    }
}
