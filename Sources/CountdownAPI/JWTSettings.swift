import Configuration
import Foundation
import JWT
import Telemetry

/// How bearer tokens are verified, read from the variables under one prefix: `API_JWT` for countdown-api,
/// `CONSOLE_JWT` for countdown-console (`<prefix>_SECRET`, `<prefix>_PUBLIC_KEY_FILE`, `<prefix>_KEYS`,
/// `<prefix>_ISSUER`, `<prefix>_AUDIENCE`, `<prefix>_MAX_LIFETIME_SECONDS`).
public struct JWTSettings: Sendable {
    /// A fixed verification key: at most one of `<prefix>_SECRET` and `<prefix>_PUBLIC_KEY_FILE`.
    public enum TokenKey: Sendable {
        case hs256(secret: [UInt8])
        case rs256(publicKeyFile: String, key: AsymmetricKey)
    }

    public var tokenKey: TokenKey?
    /// A JWKS file or a directory of `<kid>.pem` public keys, re-read when it changes.
    public var keysPath: String?
    public var issuer: String?
    public var audience: String?
    /// Longest accepted token lifetime (`<prefix>_MAX_LIFETIME_SECONDS`, a day unless set; 0 there: unlimited).
    public var maxLifetime: Duration?
    /// A day: a signed token that leaks is useless after it, and the apps renew theirs far more often.
    public static let defaultMaxLifetimeSeconds = 86_400
    /// Clock skew tolerated on `exp` and `nbf`.
    public var leeway: Duration = .seconds(30)

    public init(tokenKey: TokenKey?, keysPath: String? = nil, issuer: String? = nil, audience: String? = nil, maxLifetime: Duration? = nil) {
        self.tokenKey = tokenKey
        self.keysPath = keysPath
        self.issuer = issuer
        self.audience = audience
        self.maxLifetime = maxLifetime
    }

    /// Reads the variables under `prefix`; every problem is appended to `problems` (one per variable).
    public static func load(from env: Environment, prefix: String, problems: inout [ConfigError]) -> JWTSettings? {
        func read<T>(_ body: () throws -> T) -> T? { ConfigProblems.reading(body, into: &problems, variable: prefix + "_*") }
        let keysPath = env.optionalString(prefix + "_KEYS")
        let tokenKey = read { () throws -> TokenKey? in try Self.tokenKey(env, prefix: prefix, keysPath: keysPath) }
        let lifetime = read { try env.integer(prefix + "_MAX_LIFETIME_SECONDS", default: Self.defaultMaxLifetimeSeconds, range: 0...31_536_000) }
        if let keysPath {
            read { () throws in
                let keys: [VerificationKey]
                do {
                    keys = try JWTKeySource.load(keysPath)
                } catch {
                    let reason = (error as? JWTError)?.problem ?? "\(error)"
                    throw ConfigError(.invalid, variable: prefix + "_KEYS", problem: "\(keysPath): \(reason)")
                }
                if keys.isEmpty, tokenKey.flatMap({ $0 }) == nil {
                    throw ConfigError(.invalid, variable: prefix + "_KEYS", problem: "\(keysPath) holds no usable key (and no other key is set)")
                }
            }
        }
        guard let tokenKey, let lifetime else { return nil }
        return JWTSettings(tokenKey: tokenKey, keysPath: keysPath, issuer: env.optionalString(prefix + "_ISSUER"),
                           audience: env.optionalString(prefix + "_AUDIENCE"), maxLifetime: lifetime > 0 ? .seconds(lifetime) : nil)
    }

    /// The verifier for a key set, with the configured issuer, audience, lifetime and leeway.
    public func makeVerifier(keys: [VerificationKey], now: @escaping @Sendable () -> Date = { Date() }) -> JWTVerifier {
        var verifier = JWTVerifier(keys: keys, leeway: leeway, requireExpiry: true, audience: audience, now: now)
        verifier.issuer = issuer
        verifier.maxLifetime = maxLifetime
        return verifier
    }

    /// The fixed key of `<prefix>_SECRET` / `<prefix>_PUBLIC_KEY_FILE`, if any.
    public func fixedKeys() throws -> [VerificationKey] {
        switch tokenKey {
        case .hs256(let secret): [try .hs256(secret: secret)]
        case .rs256(_, let publicKey): [try .rs256(publicKey)]
        case nil: []
        }
    }

    /// The key source: the fixed key plus `<prefix>_KEYS`, reloaded when it changes.
    public func makeKeySource(logger: Logger, reloadFailures: Counter? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws -> JWTKeySource {
        let settings = self
        return try JWTKeySource(
            fixedKeys: try fixedKeys(), keysPath: keysPath, logger: logger.with(["component": "jwt-keys"]),
            reloadFailures: reloadFailures, makeVerifier: { settings.makeVerifier(keys: $0, now: now) })
    }

    private static func tokenKey(_ env: Environment, prefix: String, keysPath: String?) throws -> TokenKey? {
        let secretName = prefix + "_SECRET", fileName = prefix + "_PUBLIC_KEY_FILE"
        let secret = env.values[secretName].flatMap { $0.isEmpty ? nil : $0 }
        let keyFile = env.optionalString(fileName)
        let both = "\(secretName), \(fileName)"
        switch (secret, keyFile) {
        case (nil, nil):
            if keysPath != nil { return nil }
            throw ConfigError(.missing, variable: both + ", \(prefix)_KEYS",
                              problem: "set one of the first two (an HS256 secret or an RS256 public key PEM file), \(prefix)_KEYS, or both")
        case (.some, .some):
            throw ConfigError(.invalid, variable: both, problem: "both are set; set exactly one")
        case (let secret?, nil):
            guard secret.utf8.count >= 32 else {
                throw ConfigError(.invalid, variable: secretName, problem: "must be at least 32 bytes, has \(secret.utf8.count)")
            }
            return .hs256(secret: Array(secret.utf8))
        case (nil, .some):
            let path = try env.file(fileName)
            do {
                let key = try AsymmetricKey.publicKey(file: path)
                _ = try VerificationKey.rs256(key)
                return .rs256(publicKeyFile: path, key: key)
            } catch {
                let reason = (error as? JWTError)?.problem ?? "\(error)"
                throw ConfigError(.invalid, variable: fileName, problem: "\(path) is not a usable RS256 public key: \(reason)")
            }
        }
    }
}
