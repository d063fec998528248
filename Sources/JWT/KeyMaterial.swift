/// A key bound to one algorithm, checked once when it is bound, so a token can never be verified with a key of
/// another kind (algorithm confusion).
enum KeyMaterial: Sendable {
    case asymmetric(AsymmetricKey)
    case secret([UInt8])

    static let minimumRSABits = 2048
    static let minimumSecretBytes = 32

    /// Checks that `key` suits `algorithm` (RSA ≥ 2048 bits for RS256, P-256 for ES256).
    static func bind(_ key: AsymmetricKey, to algorithm: JWTAlgorithm, needsPrivate: Bool) throws -> KeyMaterial {
        if needsPrivate && !key.isPrivate {
            throw JWTError(.invalidKey, "a private key is required to sign", source: key.source)
        }
        switch (algorithm, key.kind) {
        case (.rs256, .rsa(let bits)):
            guard bits >= minimumRSABits else {
                throw JWTError(.invalidKey, "RSA key has \(bits) bits; RS256 needs at least \(minimumRSABits)", source: key.source)
            }
        case (.es256, .ec(let curve)):
            guard curve == "prime256v1" || curve == "P-256" else {
                throw JWTError(.invalidKey, "EC key is on curve \(curve); ES256 needs P-256 (prime256v1)", source: key.source)
            }
        case (.hs256, _):
            throw JWTError(.invalidKey, "HS256 takes a shared secret, not an asymmetric key", source: key.source)
        default:
            throw JWTError(.invalidKey, "a \(key.kind) key cannot be used for \(algorithm.rawValue)", source: key.source)
        }
        return .asymmetric(key)
    }

    static func bind(secret: [UInt8]) throws -> KeyMaterial {
        guard secret.count >= minimumSecretBytes else {
            throw JWTError(.invalidKey, "HS256 secret has \(secret.count) bytes; at least \(minimumSecretBytes) are required")
        }
        return .secret(secret)
    }

    /// The JWS signature of `input` (for ES256 the 64-byte `r || s`, with the low S).
    func sign(_ input: [UInt8], algorithm: JWTAlgorithm) throws -> [UInt8] {
        switch self {
        case .secret(let secret):
            return try HMACSHA256.mac(key: secret, message: input)
        case .asymmetric(let key):
            let signature = try DigestContext().sign(input, with: key.handle)
            return algorithm == .es256 ? ECDSALowS.normalized(try ECDSASignature(der: signature).raw()) : signature
        }
    }

    /// Whether `signature` is a valid JWS signature of `input`.
    func verify(_ signature: [UInt8], of input: [UInt8], algorithm: JWTAlgorithm) throws -> Bool {
        switch self {
        case .secret(let secret):
            return HMACSHA256.equalInConstantTime(try HMACSHA256.mac(key: secret, message: input), signature)
        case .asymmetric(let key):
            if algorithm == .es256 {
                // A high-S twin of a valid signature verifies too; only the low-S form is accepted (ECDSALowS).
                guard signature.count == 2 * ECDSASignature.componentSize, ECDSALowS.isLow(signature) else { return false }
                let der = try ECDSASignature(raw: signature).der()
                return try DigestContext().verify(der, of: input, with: key.handle)
            }
            return try DigestContext().verify(signature, of: input, with: key.handle)
        }
    }
}
