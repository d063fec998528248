/// The JOSE header fields this module reads or writes.
public struct JWTHeader: Codable, Sendable, Equatable {
    /// The algorithm as written in the token (may be one this module refuses, such as `none`).
    public var alg: String
    public var kid: String?
    public var typ: String?
    /// Extensions the issuer marks as critical (RFC 7515 §4.1.11). This module implements none, so a verifier
    /// refuses any token that has the field.
    public var crit: [String]?

    public init(alg: String, kid: String? = nil, typ: String? = "JWT", crit: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }
}
