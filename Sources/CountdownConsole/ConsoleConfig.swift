import Configuration
import CountdownAPI
import CountdownMaintenance
import Foundation

/// What `countdown-console` reads from the environment, checked at start: every problem is one line naming the
/// variable. The database, Redis and flow settings are the worker's (`DATABASE_URL`, `REDIS_URL`,
/// `COUNTDOWN_NAMESPACE`, `START_LEAD_SECONDS`, ...), read by `CountdownConfig`.
public struct ConsoleConfig: Sendable {
    /// `CONSOLE_AUTH`.
    public enum AuthKind: String, Sendable, CaseIterable { case proxy, jwt }

    public var address = "127.0.0.1:8090"
    public var metricsAddress = "127.0.0.1:9092"
    public var auth: AuthKind
    public var userHeader = "X-Forwarded-User"
    public var groupsHeader = "X-Forwarded-Groups"
    public var trustedProxies: TrustedProxies = .none
    public var operatorGroups: Set<String> = []
    /// `CONSOLE_CSRF_KEY`; nil: a random key per process.
    public var csrfKey: [UInt8]?
    /// `CONSOLE_JWT_*`, when `auth` is `jwt`.
    public var jwt: JWTSettings?
    public var worker: CountdownConfig

    public init(auth: AuthKind, worker: CountdownConfig) {
        self.auth = auth
        self.worker = worker
    }

    /// Reads and checks every variable.
    /// - Throws: `ConfigProblems` listing each problem.
    public static func load(from env: Environment = Environment()) throws -> ConsoleConfig {
        var problems: [ConfigError] = []
        func read<T>(_ body: () throws -> T) -> T? { ConfigProblems.reading(body, into: &problems) }
        let worker = read { try CountdownConfig.load(from: env, requirePush: false) }
        let address = read { try env.address("CONSOLE_ADDR", default: "127.0.0.1:8090") }
        let metricsAddress = read { try env.address("CONSOLE_METRICS_ADDR", default: "127.0.0.1:9092") }
        let auth = read { () throws -> AuthKind in
            guard let text = env.optionalString("CONSOLE_AUTH") else {
                throw ConfigError(.missing, variable: "CONSOLE_AUTH", problem: "required: proxy (behind an authenticating proxy) or jwt (bearer tokens)")
            }
            guard let kind = AuthKind(rawValue: text) else {
                throw ConfigError(.invalid, variable: "CONSOLE_AUTH", problem: "must be proxy or jwt, got \"\(text)\"")
            }
            return kind
        }
        let proxies = read { () throws -> TrustedProxies in
            let parsed = try TrustedProxies.load("CONSOLE_TRUSTED_PROXIES", from: env)
            if auth == .proxy, parsed == .none {
                throw ConfigError(.missing, variable: "CONSOLE_TRUSTED_PROXIES",
                                  problem: "required with CONSOLE_AUTH=proxy: the proxy's addresses (comma-separated CIDRs)")
            }
            return parsed
        }
        let header = { (name: String, fallback: String) -> String? in
            read { () throws -> String in
                let value = env.optionalString(name) ?? fallback
                guard !value.isEmpty, value.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
                    throw ConfigError(.invalid, variable: name, problem: "must be an HTTP header name, got \"\(value)\"")
                }
                return value
            }
        }
        let userHeader = header("CONSOLE_USER_HEADER", "X-Forwarded-User")
        let groupsHeader = header("CONSOLE_GROUPS_HEADER", "X-Forwarded-Groups")
        let csrfKey = read { () throws -> [UInt8]? in
            guard let key = env.optionalString("CONSOLE_CSRF_KEY") else { return nil }
            guard key.utf8.count >= 32 else {
                throw ConfigError(.invalid, variable: "CONSOLE_CSRF_KEY", problem: "must be at least 32 bytes, has \(key.utf8.count)")
            }
            return Array(key.utf8)
        }
        var jwt: JWTSettings?
        if auth == .jwt { jwt = JWTSettings.load(from: env, prefix: "CONSOLE_JWT", problems: &problems) }
        guard problems.isEmpty, let worker, let address, let metricsAddress, let auth, let proxies, let userHeader, let groupsHeader,
              let csrfKey = Optional(csrfKey) else {
            throw ConfigProblems(problems: problems)
        }
        var config = ConsoleConfig(auth: auth, worker: worker)
        config.address = address
        config.metricsAddress = metricsAddress
        config.trustedProxies = proxies
        config.userHeader = userHeader
        config.groupsHeader = groupsHeader
        config.operatorGroups = Set((env.optionalString("CONSOLE_OPERATOR_GROUPS") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        config.csrfKey = csrfKey.flatMap { $0 }
        config.jwt = jwt
        return config
    }
}
