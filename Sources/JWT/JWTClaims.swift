import Foundation

/// The registered claims (RFC 7519 §4.1) of a parsed token; other claims are read with `JWT.decodeClaims`.
public struct JWTClaims: Decodable, Sendable, Equatable {
    public var iss: String?
    public var sub: String?
    /// `aud`, whether the token holds one string or an array.
    public var aud: [String]
    /// `exp`, `nbf`, `iat` as epoch seconds.
    public var exp: Double?
    public var nbf: Double?
    public var iat: Double?

    public init(iss: String? = nil, sub: String? = nil, aud: [String] = [], exp: Double? = nil, nbf: Double? = nil, iat: Double? = nil) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.nbf = nbf
        self.iat = iat
    }

    private enum CodingKeys: String, CodingKey { case iss, sub, aud, exp, nbf, iat }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        if let single = try? container.decodeIfPresent(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decodeIfPresent([String].self, forKey: .aud) ?? []
        }
        exp = try container.decodeIfPresent(Double.self, forKey: .exp)
        nbf = try container.decodeIfPresent(Double.self, forKey: .nbf)
        iat = try container.decodeIfPresent(Double.self, forKey: .iat)
    }
}
