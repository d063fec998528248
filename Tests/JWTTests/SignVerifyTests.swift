import Foundation
import Testing
import JWT

struct Claims: Codable, Equatable {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int
    var exp: Int
}

@Suite struct SignVerifyTests {
    static let issuedAt = 1_776_384_000
    static let claims = Claims(
        iss: "svc@project.iam.gserviceaccount.com", scope: "https://www.googleapis.com/auth/firebase.messaging",
        aud: "https://oauth2.googleapis.com/token", iat: issuedAt, exp: issuedAt + 3600)
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: TimeInterval(issuedAt + 10)) }

    static func rsaKey() throws -> AsymmetricKey { try .privateKey(file: TestKeys.path("rsa.pem")) }
    static func ecKey() throws -> AsymmetricKey { try .privateKey(file: TestKeys.path("ec.p8")) }
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    @Test func rs256RoundTripWithPublicKeyPEM() throws {
        let token = try JWTSigner.rs256(privateKey: try Self.rsaKey()).sign(Self.claims)
        let publicKey = try AsymmetricKey.publicKey(pem: TestKeys.pem("rsa.pub"))
        let jwt = try JWTVerifier(keys: [try .rs256(publicKey)], now: Self.clock).verify(token)
        #expect(jwt.header.alg == "RS256")
        #expect(jwt.header.typ == "JWT")
        #expect(try jwt.decodeClaims(as: Claims.self) == Self.claims)
        #expect(jwt.claims.aud == ["https://oauth2.googleapis.com/token"])
    }

    @Test func rs256RoundTripWithPKCS1KeyAndDerivedPublicKey() throws {
        let key = try AsymmetricKey.privateKey(pem: TestKeys.pem("rsa-pkcs1.pem"))
        #expect(TestKeys.pem("rsa-pkcs1.pem").contains("BEGIN RSA PRIVATE KEY"))
        #expect(key.kind == .rsa(bits: 2048))
        let token = try JWTSigner.rs256(privateKey: key).sign(Self.claims)
        let derived = try key.publicKey()
        #expect(!derived.isPrivate)
        _ = try JWTVerifier(keys: [try .rs256(derived)], now: Self.clock).verify(token)
        _ = try JWTVerifier(keys: [try .rs256(key)], now: Self.clock).verify(token)
    }

    @Test func es256RoundTripWith64ByteSignature() throws {
        let key = try Self.ecKey()
        #expect(key.kind == .ec(curve: "prime256v1"))
        for _ in 0..<20 {  // r or s with leading zero bytes must still give 64 bytes
            let token = try JWTSigner.es256(privateKey: key, keyID: "ABC123DEFG").sign(Self.claims)
            let signature = try #require(Base64URL.decode(token.split(separator: ".")[2]))
            #expect(signature.count == 64)
            let publicKey = try AsymmetricKey.publicKey(file: TestKeys.path("ec.pub"))
            let jwt = try JWTVerifier(keys: [try .es256(publicKey, keyID: "ABC123DEFG")], now: Self.clock).verify(token)
            #expect(jwt.header.kid == "ABC123DEFG")
        }
    }

    @Test func hs256RoundTrip() throws {
        let token = try JWTSigner.hs256(secret: Self.secret).sign(Self.claims)
        let jwt = try JWTVerifier(keys: [try .hs256(secret: Self.secret)], now: Self.clock).verify(token)
        #expect(try jwt.decodeClaims(as: Claims.self) == Self.claims)
    }

    @Test(arguments: ["RS256", "ES256", "HS256"])
    func tamperingIsDetected(algorithm: String) throws {
        let (signer, key) = try Self.pair(algorithm)
        let token = try signer.sign(Self.claims)
        let verifier = JWTVerifier(keys: [key], now: Self.clock)
        let parts = token.split(separator: ".").map(String.init)

        var forged = Self.claims
        forged.iss = "attacker@example.com"
        let forgedClaims = Base64URL.encode(Array(try JSONEncoder().encode(forged)))
        let swappedClaims = [parts[0], forgedClaims, parts[2]].joined(separator: ".")
        #expect(throws: JWTError(.badSignature, "the \(algorithm) signature does not match")) { try verifier.verify(swappedClaims) }

        var signature = try #require(Base64URL.decode(parts[2]))
        signature[signature.count / 2] ^= 0x01
        let flipped = [parts[0], parts[1], Base64URL.encode(signature)].joined(separator: ".")
        #expect(throws: JWTError(.badSignature, "the \(algorithm) signature does not match")) { try verifier.verify(flipped) }

        let truncated = [parts[0], parts[1], Base64URL.encode(signature.dropLast())].joined(separator: ".")
        #expect(throws: JWTError(.badSignature, "the \(algorithm) signature does not match")) { try verifier.verify(truncated) }
    }

    @Test func signatureFromAnotherKeyIsRejected() throws {
        let other = try AsymmetricKey.privateKey(pem: TestKeys.pem("rsa-pkcs1.pem"))
        let token = try JWTSigner.rs256(privateKey: other).sign(Self.claims)
        let verifier = JWTVerifier(keys: [try .rs256(try Self.rsaKey())], now: Self.clock)
        let error = #expect(throws: JWTError.self) { try verifier.verify(token) }
        #expect(error?.code == .badSignature)
    }

    @Test func concurrentSigningWithOneKeyIsSafe() async throws {
        let signer = try JWTSigner.es256(privateKey: try Self.ecKey())
        let verifier = JWTVerifier(keys: [try .es256(try Self.ecKey())], now: Self.clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { _ = try verifier.verify(try signer.sign(Self.claims)) }
            }
            try await group.waitForAll()
        }
    }

    static func pair(_ algorithm: String) throws -> (JWTSigner, VerificationKey) {
        switch algorithm {
        case "RS256": return (try .rs256(privateKey: try rsaKey()), try .rs256(try rsaKey()))
        case "ES256": return (try .es256(privateKey: try ecKey()), try .es256(try ecKey()))
        default: return (try .hs256(secret: secret), try .hs256(secret: secret))
        }
    }
}
