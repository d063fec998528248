import Foundation

/// Verifies compact JWS tokens: the algorithm must be one a key was given for (never `none`), the signature must
/// match, and `exp` / `nbf` must hold at the injected clock's time within the leeway.
public struct JWTVerifier: Sendable {
    public let keys: [VerificationKey]
    public let leeway: Duration
    public let requireExpiry: Bool
    /// When set, the token's `aud` must contain it.
    public let audience: String?
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
        let jwt = try JWT.parse(token)
        guard let algorithm = JWTAlgorithm(rawValue: jwt.header.alg) else {
            throw JWTError(.unsupportedAlgorithm, "algorithm \"\(jwt.header.alg)\" is not supported")
        }
        let candidates = keys.filter { $0.algorithm == algorithm }
        guard !candidates.isEmpty else {
            throw JWTError(.algorithmNotAllowed, "algorithm \(algorithm.rawValue) is not accepted here")
        }
        let matching = candidates.filter { $0.keyID == nil || $0.keyID == jwt.header.kid }
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
            throw JWTError(.invalidClaims, "aud \(jwt.claims.aud) does not contain \"\(audience)\"")
        }
        return jwt
    }

    /// Checks `exp` and `nbf` of claims verified earlier against the clock now (for callers that cache
    /// verified tokens: a signature stays valid, a token's time window does not).
    /// - Throws: `JWTError` `.expired`, `.notYetValid` or `.invalidClaims`.
    public func checkTimes(_ claims: JWTClaims) throws {
        let current = now().timeIntervalSince1970
        let slack = Double(leeway.components.seconds) + Double(leeway.components.attoseconds) / 1e18
        if let exp = claims.exp {
            if current >= exp + slack { throw JWTError(.expired, "expired at \(Int64(exp)), now \(Int64(current))") }
        } else if requireExpiry {
            throw JWTError(.invalidClaims, "the token has no exp")
        }
        if let nbf = claims.nbf, current + slack < nbf {
            throw JWTError(.notYetValid, "not valid before \(Int64(nbf)), now \(Int64(current))")
        }
    }
}
