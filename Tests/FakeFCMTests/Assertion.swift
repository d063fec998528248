import Foundation
import TestSupport
import JWT

/// Service-account JWT assertions, valid or broken on purpose.
struct Assertion: Encodable {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int
    var exp: Int

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The claims a correct client sends now.
    static func valid(for fake: FakeFCMProcess, now: Date = Date()) -> Assertion {
        let iat = Int(now.timeIntervalSince1970)
        return Assertion(iss: fake.account["client_email"]!, scope: scope, aud: fake.account["token_uri"]!, iat: iat, exp: iat + 3600)
    }

    /// Signed with the account's key (or `pem`), with the account's key id.
    static func sign(for fake: FakeFCMProcess, _ edit: (inout Assertion) -> Void = { _ in }, pem: String? = nil) throws -> String {
        var claims = valid(for: fake)
        edit(&claims)
        let key = try AsymmetricKey.privateKey(pem: pem ?? fake.account["private_key"]!)
        return try JWTSigner.rs256(privateKey: key, keyID: fake.account["private_key_id"]).sign(claims)
    }
}
