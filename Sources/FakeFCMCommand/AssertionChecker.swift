import Foundation
import JWT

/// Checks a service account's signed JWT assertion as Google's token endpoint does: RS256 signature by the
/// account's key, `iss` = client_email, the FCM scope, `aud` = token_uri, and a lifetime of at most an hour.
struct AssertionChecker: Sendable {
    /// An OAuth error answer (`error`, `error_description`).
    struct Refusal: Error, Sendable, Equatable {
        let error: String
        let description: String
    }

    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let maxLifetime: Double = 3600
    static let skew: Double = 60

    private struct Claims: Decodable {
        let scope: String?
    }

    let account: ServiceAccount
    private let verifier: JWTVerifier
    private let now: @Sendable () -> Date

    init(account: ServiceAccount, now: @escaping @Sendable () -> Date) throws(UsageError) {
        self.account = account
        self.now = now
        do {
            let key = try AsymmetricKey.privateKey(pem: account.privateKeyPEM, source: "service account private_key")
            verifier = JWTVerifier(keys: [try .rs256(key)], leeway: .seconds(Int64(Self.skew)), requireExpiry: true, now: now)
        } catch {
            throw UsageError("service account private_key cannot verify RS256: \(error)")
        }
    }

    /// Checks the form fields of a token request.
    func check(grantType: String?, assertion: String?) throws(Refusal) {
        guard let grantType, !grantType.isEmpty else {
            throw Refusal(error: "invalid_request", description: "Missing required parameter: grant_type")
        }
        guard grantType == Self.grantType else {
            throw Refusal(error: "unsupported_grant_type", description: "Invalid grant_type: \(grantType)")
        }
        guard let assertion, !assertion.isEmpty else {
            throw Refusal(error: "invalid_request", description: "Missing required parameter: assertion")
        }
        let jwt: JWT
        do {
            jwt = try verifier.verify(assertion)
        } catch {
            throw Self.refusal(for: error)
        }
        if let kid = jwt.header.kid, let expected = account.privateKeyID, kid != expected {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT Signature.")
        }
        let claims = jwt.claims
        guard claims.iss == account.clientEmail else {
            throw Refusal(error: "invalid_grant", description: "Invalid email or User ID")
        }
        guard claims.aud == [account.tokenURI] else {
            throw Refusal(error: "invalid_grant", description: "Invalid JWT: Failed audience check. The right audience is \(account.tokenURI)")
        }
        let scopes = ((try? jwt.decodeClaims(as: Claims.self))?.scope ?? "").split(separator: " ")
        guard scopes.contains(where: { $0 == Self.messagingScope }) else {
            throw Refusal(error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
        }
        guard let iat = claims.iat, let exp = claims.exp, exp > iat, exp - iat <= Self.maxLifetime, iat <= now().timeIntervalSince1970 + Self.skew else {
            throw Self.timeframeRefusal
        }
    }

    private static let timeframeRefusal = Refusal(
        error: "invalid_grant",
        description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")

    private static func refusal(for error: any Error) -> Refusal {
        guard let error = error as? JWTError else { return Refusal(error: "invalid_grant", description: "Invalid JWT.") }
        switch error.code {
        case .badSignature, .algorithmNotAllowed, .unsupportedAlgorithm:
            return Refusal(error: "invalid_grant", description: "Invalid JWT Signature.")
        case .expired, .notYetValid:
            return timeframeRefusal
        default:
            return Refusal(error: "invalid_grant", description: "Invalid JWT: \(error.problem)")
        }
    }
}
