/// The JWS algorithms this module signs and verifies. `none` is deliberately absent.
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256; the signature is the 64-byte JOSE `r || s`.
    case es256 = "ES256"
    /// HMAC with SHA-256.
    case hs256 = "HS256"
}
