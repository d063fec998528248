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
    public var tokenLeeway: Duration

    /// Reads and checks every variable.
    /// - Throws: `APIConfigProblems` listing each problem.
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(APIConfigProblems) -> APIConfig {
        var problems: [String] = []
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }

        let databaseURL = value("DATABASE_URL")
        if let databaseURL {
            if let components = URLComponents(string: databaseURL), ["postgres", "postgresql"].contains(components.scheme?.lowercased() ?? ""),
               components.host?.isEmpty == false {
            } else {
                problems.append("DATABASE_URL: must look like postgres://user:pass@host:port/db")
            }
        } else {
            problems.append("DATABASE_URL: is required but not set")
        }

        let address = value("API_ADDR") ?? "0.0.0.0:8080"
        if !isAddress(address) { problems.append("API_ADDR: must be host:port, got \"\(address)\"") }

        var tokenKey: TokenKey?
        switch (environment["API_JWT_SECRET"].flatMap { $0.isEmpty ? nil : $0 }, value("API_JWT_PUBLIC_KEY_FILE")) {
        case (nil, nil):
            problems.append("API_JWT_SECRET / API_JWT_PUBLIC_KEY_FILE: set exactly one (HS256 secret or RS256 public key PEM file)")
        case (.some, .some):
            problems.append("API_JWT_SECRET / API_JWT_PUBLIC_KEY_FILE: both are set; set exactly one")
        case (let secret?, nil):
            if secret.utf8.count < 32 {
                problems.append("API_JWT_SECRET: must be at least 32 bytes, got \(secret.utf8.count)")
            } else {
                tokenKey = .hs256(secret: Array(secret.utf8))
            }
        case (nil, let path?):
            do {
                let key = try AsymmetricKey.publicKey(file: path)
                _ = try VerificationKey.rs256(key)
                tokenKey = .rs256(publicKeyFile: path, key: key)
            } catch {
                problems.append("API_JWT_PUBLIC_KEY_FILE: \(path) is not a usable RS256 public key: \((error as? JWTError)?.problem ?? "\(error)")")
            }
        }

        var logger = Logger(level: .info)
        do {
            logger = try Logger(environment: environment)
        } catch {
            problems.append(error.description)
        }

        var grace = 25
        if let raw = value("SHUTDOWN_GRACE_SECONDS") {
            if let parsed = Int(raw), (0...3600).contains(parsed) {
                grace = parsed
            } else {
                problems.append("SHUTDOWN_GRACE_SECONDS: must be a whole number between 0 and 3600, got \"\(raw)\"")
            }
        }

        guard problems.isEmpty, let databaseURL, let tokenKey else { throw APIConfigProblems(lines: problems) }
        return APIConfig(
            databaseURL: databaseURL, address: address, tokenKey: tokenKey, logger: logger, shutdownGraceSeconds: grace,
            tokenLeeway: .seconds(30))
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

    private static func isAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
              let port = Int(text[text.index(after: colon)...]) else { return false }
        return (0...65535).contains(port)
    }
}

/// Every configuration problem found at start, one line each.
public struct APIConfigProblems: Error, Sendable, CustomStringConvertible {
    public let lines: [String]
    public var description: String { lines.joined(separator: "\n") }
}
