/// A key the verifier accepts, bound to exactly one algorithm.
public struct VerificationKey: Sendable {
    public let algorithm: JWTAlgorithm
    /// When set, only tokens whose header `kid` matches are checked against this key.
    public let keyID: String?
    let material: KeyMaterial

    /// RS256 with an RSA public key, or a private key whose public half is used.
    public static func rs256(_ key: AsymmetricKey, keyID: String? = nil) throws -> VerificationKey {
        VerificationKey(algorithm: .rs256, keyID: keyID, material: try .bind(try key.publicKey(), to: .rs256, needsPrivate: false))
    }

    /// ES256 with a P-256 public key, or a private key whose public half is used.
    public static func es256(_ key: AsymmetricKey, keyID: String? = nil) throws -> VerificationKey {
        VerificationKey(algorithm: .es256, keyID: keyID, material: try .bind(try key.publicKey(), to: .es256, needsPrivate: false))
    }

    /// HS256 with the shared secret.
    public static func hs256(secret: [UInt8], keyID: String? = nil) throws -> VerificationKey {
        VerificationKey(algorithm: .hs256, keyID: keyID, material: try .bind(secret: secret))
    }
}
