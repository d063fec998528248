import Foundation
import JWT
import Synchronization

/// Checks an APNs `authorization: bearer <provider token>` as APNs does: an ES256 JWT signed by the team's key,
/// `kid` = the key id, `iss` = the team id, `iat` not older than an hour (`ExpiredProviderToken`) nor in the future.
/// Verified tokens are remembered (one signature check per token, not per push).
final class ProviderTokenChecker: Sendable {
    static let maxAge: Double = 3600
    static let skew: Double = 60

    let keyID: String
    let teamID: String
    private let verifier: JWTVerifier
    private let now: @Sendable () -> Date
    /// Verified token → its `iat`.
    private let verified = Mutex<[String: Double]>([:])

    /// - Parameter key: the `.p8` key (its public half verifies) or a public key.
    init(key: AsymmetricKey, keyID: String, teamID: String, now: @escaping @Sendable () -> Date) throws(UsageError) {
        self.keyID = keyID
        self.teamID = teamID
        self.now = now
        do {
            verifier = JWTVerifier(keys: [try .es256(key, keyID: keyID)], leeway: .seconds(Int64(Self.skew)), requireExpiry: false, now: now)
        } catch {
            throw UsageError("the APNs key cannot verify ES256: \(error)")
        }
    }

    /// Checks the `authorization` header's value.
    func check(authorization: String?) throws(APNsRefusal) {
        guard let authorization, !authorization.isEmpty else { throw APNsRefusal(status: 403, reason: "MissingProviderToken") }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APNsRefusal(status: 403, reason: "MissingProviderToken") }
        let token = String(parts[1])
        let time = now().timeIntervalSince1970
        let iat: Double
        if let known = verified.withLock({ $0[token] }) {
            iat = known
        } else {
            let jwt: JWT
            do {
                jwt = try verifier.verify(token)
            } catch {
                throw APNsRefusal(status: 403, reason: "InvalidProviderToken")
            }
            guard jwt.header.kid == keyID, jwt.claims.iss == teamID, let issued = jwt.claims.iat, issued <= time + Self.skew else {
                throw APNsRefusal(status: 403, reason: "InvalidProviderToken")
            }
            iat = issued
            verified.withLock { tokens in
                if tokens.count >= 1024 { tokens.removeAll() }
                tokens[token] = issued
            }
        }
        guard time - iat <= Self.maxAge else { throw APNsRefusal(status: 403, reason: "ExpiredProviderToken") }
    }
}
