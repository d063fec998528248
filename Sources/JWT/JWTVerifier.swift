import Foundation

/// Verifies compact JWS tokens: the token must not be longer than `maxTokenBytes`, the algorithm must be one a
/// key was given for (never `none`), the header must not carry `crit`, the signature must match, `exp` / `nbf`
/// must hold at the injected clock's time within the leeway, and `iss`, `aud` and the lifetime must be the
/// expected ones when the verifier is told to check them.
public struct JWTVerifier: Sendable {
    /// Tokens longer than this are refused before they are parsed (8 KiB unless told otherwise).
    public static let defaultMaxTokenBytes = 8 * 1024

    public let keys: [VerificationKey]
    public let leeway: Duration
    public let requireExpiry: Bool
    /// When set, the token's `aud` must contain it.
    public let audience: String?
    /// When set, the token's `iss` must equal it.
    public var issuer: String?
    /// When set, `exp` may lie at most this far after `iat` (when present) and after now (plus the leeway).
    public var maxLifetime: Duration?
    public var maxTokenBytes = JWTVerifier.defaultMaxTokenBytes
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - keys: the allow-list; a token's algorithm must match one of these keys' algorithms.
    ///   - leeway: clock skew tolerated on `exp` and `nbf`.
    ///   - requireExpiry: refuse tokens without `exp`.
    ///   - now: the clock (tests inject a fixed one).
    public init(
        keys: [VerificationKey], leeway: Duration = .seconds(60), requireExpiry: Bool = true, audience: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.keys = keys
        self.leeway = leeway
        self.requireExpiry = requireExpiry
        self.audience = audience
        self.now = now
    }

    /// The parsed token when it is authentic and currently valid.
    /// - Throws: `JWTError` with `.malformedToken`, `.unsupportedAlgorithm`, `.algorithmNotAllowed`, `.badSignature`,
    ///   `.expired`, `.notYetValid` or `.invalidClaims`.
    public func verify(_ token: String) throws -> JWT {
        guard token.utf8.count <= maxTokenBytes else {
            throw JWTError(.tokenTooLarge, "the token has \(token.utf8.count) bytes, more than \(maxTokenBytes)")
        }
        let jwt = try JWT.parse(token)
        if jwt.header.crit != nil {
            throw JWTError(.criticalHeader, "the header marks extensions as critical (crit); none is supported")
        }
        guard let algorithm = JWTAlgorithm(rawValue: jwt.header.alg) else {
            throw JWTError(.unsupportedAlgorithm, "algorithm \"\(jwt.header.alg)\" is not supported")
        }
        let candidates = keys.filter { $0.algorithm == algorithm }
        guard !candidates.isEmpty else {
            throw JWTError(.algorithmNotAllowed, "algorithm \(algorithm.rawValue) is not accepted here")
        }
        var matching = candidates.filter { $0.keyID == nil || $0.keyID == jwt.header.kid }
        // A token without `kid` is checked against the one key of its algorithm, as with a single key file: a set
        // holding one key accepts an issuer that writes no `kid`; with two or more, the token must choose.
        if matching.isEmpty, jwt.header.kid == nil, candidates.count == 1 { matching = candidates }
        guard !matching.isEmpty else {
            throw JWTError(.badSignature, "no key with kid \"\(jwt.header.kid ?? "")\"")
        }
        var verified = false
        for key in matching where try key.material.verify(jwt.signature, of: jwt.signingInput, algorithm: algorithm) {
            verified = true
            break
        }
        guard verified else { throw JWTError(.badSignature, "the \(algorithm.rawValue) signature does not match") }
        try checkTimes(jwt.claims)
        if let audience, !jwt.claims.aud.contains(audience) {
            throw JWTError(.wrongIssuerOrAudience, "aud \(jwt.claims.aud) does not contain \"\(audience)\"")
        }
        if let issuer, jwt.claims.iss != issuer {
            throw JWTError(.wrongIssuerOrAudience, "iss \"\(jwt.claims.iss ?? "")\" is not \"\(issuer)\"")
        }
        return jwt
    }

    /// Checks `exp` and `nbf` of claims verified earlier against the clock now (for callers that cache
    /// verified tokens: a signature stays valid, a token's time window does not).
    /// - Throws: `JWTError` `.expired`, `.notYetValid`, `.lifetimeTooLong` or `.invalidClaims`.
    public func checkTimes(_ claims: JWTClaims) throws {
        let current = now().timeIntervalSince1970
        let slack = Self.seconds(leeway)
        if let maxLifetime {
            let limit = Self.seconds(maxLifetime)
            guard let exp = claims.exp else { throw JWTError(.invalidClaims, "the token has no exp (a maximum lifetime is set)") }
            if exp - current > limit + slack {
                throw JWTError(.lifetimeTooLong, "exp \(Self.whole(exp)) is more than \(Self.whole(limit)) s ahead of now \(Self.whole(current))")
            }
            if let iat = claims.iat, exp - iat > limit {
                throw JWTError(.lifetimeTooLong, "exp - iat is \(Self.whole(exp - iat)) s, more than \(Self.whole(limit)) s")
            }
        }
        if let exp = claims.exp {
            if current >= exp + slack { throw JWTError(.expired, "expired at \(Self.whole(exp)), now \(Self.whole(current))") }
        } else if requireExpiry {
            throw JWTError(.invalidClaims, "the token has no exp")
        }
        if let nbf = claims.nbf, current + slack < nbf {
            throw JWTError(.notYetValid, "not valid before \(Self.whole(nbf)), now \(Self.whole(current))")
        }
    }

    /// Epoch or elapsed seconds for a message, without a conversion that could trap.
    private static func whole(_ seconds: Double) -> String {
        Int64(exactly: seconds.rounded(.towardZero)).map(String.init) ?? "\(seconds)"
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
