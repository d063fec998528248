/// The JOSE header fields this module reads or writes.
public struct JWTHeader: Codable, Sendable, Equatable {
    /// The algorithm as written in the token (may be one this module refuses, such as `none`).
    public var alg: String
    public var kid: String?
    public var typ: String?

    public init(alg: String, kid: String? = nil, typ: String? = "JWT") {
        self.alg = alg
        self.kid = kid
        self.typ = typ
    }
}
