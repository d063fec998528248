import Foundation
import Testing
import JWT

@Suite struct RejectionTests {
    static let now = 1_776_384_000
    static func at(_ seconds: Int) -> @Sendable () -> Date { { Date(timeIntervalSince1970: TimeInterval(seconds)) } }
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    static func code(_ body: () throws -> Any) -> JWTError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as JWTError {
            return error.code
        } catch {
            return nil
        }
    }

    static func unsigned(header: String, claims: String, signature: String = "") -> String {
        Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "." + signature
    }

    @Test func noneIsRejected() throws {
        let verifier = JWTVerifier(keys: [try .hs256(secret: Self.secret)], now: Self.at(Self.now))
        for alg in ["none", "None", "NONE"] {
            let token = Self.unsigned(header: "{\"alg\":\"\(alg)\"}", claims: "{\"exp\":\(Self.now + 60)}")
            #expect(Self.code { try verifier.verify(token) } == .unsupportedAlgorithm)
        }
        let missing = Self.unsigned(header: "{\"typ\":\"JWT\"}", claims: "{}")
        #expect(Self.code { try verifier.verify(missing) } == .malformedToken)
    }

    @Test func algorithmOutsideTheAllowListIsRejected() throws {
        let ecKey = try AsymmetricKey.privateKey(file: TestKeys.path("ec.p8"))
        let token = try JWTSigner.es256(privateKey: ecKey).sign(["exp": Self.now + 60])
        let verifier = JWTVerifier(keys: [try .rs256(try .privateKey(file: TestKeys.path("rsa.pem")))], now: Self.at(Self.now))
        #expect(Self.code { try verifier.verify(token) } == .algorithmNotAllowed)
        #expect(Self.code { try verifier.verify(Self.unsigned(header: "{\"alg\":\"PS256\"}", claims: "{}")) } == .unsupportedAlgorithm)
    }

    @Test func hmacWithThePublicKeyAsSecretIsRejected() throws {
        // The classic confusion attack: sign HS256 with the RSA public key PEM and hope the verifier uses it as a secret.
        let publicPEM = TestKeys.pem("rsa.pub")
        let token = try JWTSigner.hs256(secret: Array(publicPEM.utf8)).sign(["exp": Self.now + 60])
        let verifier = JWTVerifier(keys: [try .rs256(try .publicKey(pem: publicPEM))], now: Self.at(Self.now))
        #expect(Self.code { try verifier.verify(token) } == .algorithmNotAllowed)
    }

    @Test func malformedTokensAreRejected() throws {
        let verifier = JWTVerifier(keys: [try .hs256(secret: Self.secret)], now: Self.at(Self.now))
        let valid = try JWTSigner.hs256(secret: Self.secret).sign(["exp": Self.now + 60])
        let parts = valid.split(separator: ".").map(String.init)
        let cases = [
            "", "abc", parts[0] + "." + parts[1], valid + ".x", "!!!." + parts[1] + "." + parts[2],
            parts[0] + ".%%%." + parts[2], parts[0] + "." + parts[1] + ".***",
            Self.unsigned(header: "not json", claims: "{}"), Self.unsigned(header: "{\"alg\":\"HS256\"}", claims: "[1,2]"),
            Self.unsigned(header: "[\"HS256\"]", claims: "{}"),
        ]
        for token in cases {
            #expect(Self.code { try verifier.verify(token) } == .malformedToken, "token \(token)")
        }
        let badClaim = Self.unsigned(header: "{\"alg\":\"HS256\"}", claims: "{\"exp\":\"tomorrow\"}")
        #expect(Self.code { try JWT.parse(badClaim) } == .invalidClaims)
    }

    @Test func expiryAndNotBeforeHonourLeeway() throws {
        let signer = try JWTSigner.hs256(secret: Self.secret)
        let key = try VerificationKey.hs256(secret: Self.secret)
        let token = try signer.sign(["nbf": Self.now, "exp": Self.now + 100])
        func verify(at time: Int) -> JWTError.Code? {
            Self.code { try JWTVerifier(keys: [key], leeway: .seconds(30), now: Self.at(time)).verify(token) }
        }
        #expect(verify(at: Self.now + 50) == nil)
        #expect(verify(at: Self.now + 129) == nil)
        #expect(verify(at: Self.now + 130) == .expired)
        #expect(verify(at: Self.now - 30) == nil)
        #expect(verify(at: Self.now - 31) == .notYetValid)

        let noExpiry = try signer.sign(["iat": Self.now])
        #expect(Self.code { try JWTVerifier(keys: [key], now: Self.at(Self.now)).verify(noExpiry) } == .invalidClaims)
        #expect(Self.code { try JWTVerifier(keys: [key], requireExpiry: false, now: Self.at(Self.now)).verify(noExpiry) } == nil)
    }

    @Test func audienceAndKeyIDAreChecked() throws {
        let signer = try JWTSigner.hs256(secret: Self.secret, keyID: "one")
        struct Claims: Encodable { let exp: Int; let aud: String }
        let good = try signer.sign(Claims(exp: Self.now + 60, aud: "https://a.example"))
        let key = try VerificationKey.hs256(secret: Self.secret, keyID: "one")
        #expect(Self.code { try JWTVerifier(keys: [key], audience: "https://a.example", now: Self.at(Self.now)).verify(good) } == nil)
        #expect(Self.code { try JWTVerifier(keys: [key], audience: "https://b.example", now: Self.at(Self.now)).verify(good) } == .wrongIssuerOrAudience)
        let otherKid = try VerificationKey.hs256(secret: Self.secret, keyID: "two")
        #expect(Self.code { try JWTVerifier(keys: [otherKid], now: Self.at(Self.now)).verify(good) } == .badSignature)
    }
}
