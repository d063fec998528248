import Configuration
import Foundation
import JWT
import Telemetry

/// What `countdown-api` reads from the environment, validated at start: every problem is reported, one line
/// each, naming the variable.
public struct APIConfig: Sendable {
    /// How bearer tokens are verified: exactly one of `API_JWT_SECRET` and `API_JWT_PUBLIC_KEY_FILE`.
    public enum TokenKey: Sendable {
        case hs256(secret: [UInt8])
        case rs256(publicKeyFile: String, key: AsymmetricKey)
    }

    public var databaseURL: String
    public var address: String
    public var tokenKey: TokenKey
    public var logger: Logger
    public var shutdownGraceSeconds: Int
    /// Clock skew tolerated on `exp` and `nbf`.
    public var tokenLeeway: Duration = .seconds(30)
    /// PostgreSQL connections the API keeps at most (`API_DATABASE_CONNECTIONS`).
    public var databaseConnections = 16
    /// Event-loop threads of the HTTP server (`API_HTTP_THREADS`).
    public var httpThreads = 4

    /// Reads and checks every variable.
    /// - Throws: `ConfigProblems` listing each problem.
    public static func load(from env: Environment = Environment()) throws -> APIConfig {
        var problems: [ConfigError] = []
        func read<T>(_ body: () throws -> T) -> T? {
            do { return try body() } catch let error as ConfigError {
                problems.append(error)
            } catch {
                problems.append(ConfigError(.invalid, variable: "?", problem: "\(error)"))
            }
            return nil
        }
        let databaseURL = read { try env.url("DATABASE_URL", schemes: ["postgres", "postgresql"]) }
        let address = read { try env.address("API_ADDR", default: "0.0.0.0:8080") }
        let tokenKey = read { () throws -> TokenKey in try Self.tokenKey(env) }
        let grace = read { try env.integer("SHUTDOWN_GRACE_SECONDS", default: 25, range: 0...3600) }
        let connections = read { try env.integer("API_DATABASE_CONNECTIONS", default: 16, range: 1...256) }
        let threads = read { try env.integer("API_HTTP_THREADS", default: 4, range: 1...64) }
        let level = read { try env.logLevel() }
        let format = read { try env.logFormat() }
        let logger = level.flatMap { level in format.map { Logger(level: level, format: $0) } }
        guard problems.isEmpty, let databaseURL, let address, let tokenKey, let grace, let logger, let connections, let threads else {
            throw ConfigProblems(problems: problems)
        }
        return APIConfig(
            databaseURL: databaseURL, address: address, tokenKey: tokenKey, logger: logger, shutdownGraceSeconds: grace,
            databaseConnections: connections, httpThreads: threads)
    }

    /// The verifier for the configured key.
    public func makeVerifier(now: @escaping @Sendable () -> Date = { Date() }) throws -> JWTVerifier {
        let key: VerificationKey
        switch tokenKey {
        case .hs256(let secret): key = try .hs256(secret: secret)
        case .rs256(_, let publicKey): key = try .rs256(publicKey)
        }
        return JWTVerifier(keys: [key], leeway: tokenLeeway, requireExpiry: true, now: now)
    }

    private static func tokenKey(_ env: Environment) throws -> TokenKey {
        let secret = env.values["API_JWT_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        let keyFile = env.optionalString("API_JWT_PUBLIC_KEY_FILE")
        let both = "API_JWT_SECRET, API_JWT_PUBLIC_KEY_FILE"
        switch (secret, keyFile) {
        case (nil, nil):
            throw ConfigError(.missing, variable: both, problem: "set exactly one (an HS256 secret or an RS256 public key PEM file)")
        case (.some, .some):
            throw ConfigError(.invalid, variable: both, problem: "both are set; set exactly one")
        case (let secret?, nil):
            guard secret.utf8.count >= 32 else {
                throw ConfigError(.invalid, variable: "API_JWT_SECRET", problem: "must be at least 32 bytes, has \(secret.utf8.count)")
            }
            return .hs256(secret: Array(secret.utf8))
        case (nil, .some):
            let path = try env.file("API_JWT_PUBLIC_KEY_FILE")
            do {
                let key = try AsymmetricKey.publicKey(file: path)
                _ = try VerificationKey.rs256(key)
                return .rs256(publicKeyFile: path, key: key)
            } catch {
                let reason = (error as? JWTError)?.problem ?? "\(error)"
                throw ConfigError(.invalid, variable: "API_JWT_PUBLIC_KEY_FILE", problem: "\(path) is not a usable RS256 public key: \(reason)")
            }
        }
    }
}
