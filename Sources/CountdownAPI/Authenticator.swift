import HTTPServer
import JWT

/// Turns an `Authorization: Bearer <JWT>` header into a `Caller`. Tokens are issued by the existing backend
/// (HS256 with a shared secret or RS256 with its key pair); `sub` is the user id and `role: admin` marks
/// admins. Any problem is a 401 whose message says what is wrong, never what the token holds.
public struct Authenticator: Sendable {
    /// Longest accepted `sub` (the `users.id` of the caller).
    public static let maxUserIDLength = 256

    private struct RoleClaims: Decodable {
        let role: String?

        private enum CodingKeys: String, CodingKey { case role }

        init(from decoder: any Decoder) throws {
            role = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .role)
        }
    }

    public let keys: JWTKeySource
    let cache: VerifiedTokenCache

    /// - Parameter cacheCapacity: verified tokens remembered (their time window is still checked on each use).
    public init(keys: JWTKeySource, cacheCapacity: Int = 10_000) {
        self.keys = keys
        cache = VerifiedTokenCache(capacity: cacheCapacity)
    }

    /// The caller, or nil when the request has no `Authorization` header.
    /// - Throws: `APIError` `.unauthorized` for a header that is not a valid bearer token.
    public func caller(of request: HTTPRequest) throws(APIError) -> Caller? {
        guard let header = request.headers["Authorization"] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError(.unauthorized, "the Authorization header must be \"Bearer <token>\"")
        }
        let current = keys.current()
        let verifier = current.verifier
        let token = String(parts[1].drop { $0 == " " })
        // Refused before anything is decoded or cached: the size alone says it is no token of ours.
        guard token.utf8.count <= verifier.maxTokenBytes else { throw APIError(.unauthorized, Self.reason(.tokenTooLarge)) }
        if let known = cache.lookup(token, generation: current.generation) {
            do {
                try verifier.checkTimes(known.claims)
            } catch {
                throw APIError(.unauthorized, Self.reason((error as? JWTError)?.code ?? .malformedToken))
            }
            return known.caller
        }
        let jwt: JWT
        do {
            jwt = try verifier.verify(token)
        } catch {
            throw APIError(.unauthorized, Self.reason((error as? JWTError)?.code ?? .malformedToken))
        }
        // A control character (NUL above all, which PostgreSQL text cannot hold) is no user id of ours.
        guard let subject = jwt.claims.sub, !subject.isEmpty, subject.count <= Self.maxUserIDLength,
            !subject.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw APIError(.unauthorized, "the token has no usable sub (user id)")
        }
        let role = (try? jwt.decodeClaims(as: RoleClaims.self))?.role
        let caller = Caller(userID: subject, isAdmin: role == "admin")
        cache.insert(token, VerifiedTokenCache.Entry(caller: caller, claims: jwt.claims, generation: current.generation))
        return caller
    }

    /// The caller, required.
    /// - Throws: `APIError` `.unauthorized` when there is no header or it is not a valid bearer token.
    public func requireCaller(of request: HTTPRequest) throws(APIError) -> Caller {
        guard let caller = try caller(of: request) else {
            throw APIError(.unauthorized, "this endpoint needs an Authorization: Bearer <token> header")
        }
        return caller
    }

    private static func reason(_ code: JWTError.Code) -> String {
        switch code {
        case .malformedToken: "the bearer token is malformed"
        case .invalidClaims: "the bearer token's claims are invalid (exp is required)"
        case .unsupportedAlgorithm, .algorithmNotAllowed: "the bearer token's algorithm is not accepted"
        case .badSignature: "the bearer token's signature does not match"
        case .expired: "the bearer token has expired"
        case .notYetValid: "the bearer token is not valid yet"
        case .invalidKey, .cryptoFailure, .invalidServiceAccount: "the bearer token cannot be verified"
        case .wrongIssuerOrAudience: "the bearer token was issued by or for someone else (iss / aud)"
        case .lifetimeTooLong: "the bearer token's lifetime is longer than accepted here"
        case .criticalHeader: "the bearer token has critical header extensions (crit), which are not supported"
        case .tokenTooLarge: "the bearer token is too large"
        }
    }
}
