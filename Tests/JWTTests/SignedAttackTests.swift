import Foundation
import Testing
@testable import JWT

/// Tokens with a valid signature that try to crash or confuse the verifier (anyone holding a signing key, such as
/// another service sharing the HS256 secret, can make them).
@Suite struct SignedAttackTests {
    static let now = RejectionTests.now
    static let secret = RejectionTests.secret

    static func verifier(maxLifetime: Duration? = nil) throws -> JWTVerifier {
        var verifier = JWTVerifier(keys: [try .hs256(secret: secret)], now: RejectionTests.at(now))
        verifier.maxLifetime = maxLifetime
        return verifier
    }

    static func signed(header: String = #"{"alg":"HS256","typ":"JWT"}"#, claims: String) throws -> String {
        try JWTSigner.hs256(secret: secret).sign(headerJSON: Array(header.utf8), claimsJSON: Array(claims.utf8))
    }

    @Test func timeClaimsOutsideTheCalendarAreRefusedAtParsing() throws {
        let lifetime = try Self.verifier(maxLifetime: .seconds(86400))
        let plain = try Self.verifier()
        let cases = [
            #"{"sub":"u1","exp":\#(Self.now + 60),"nbf":1e300}"#, #"{"sub":"u1","exp":1e300}"#,
            #"{"sub":"u1","exp":\#(Self.now + 60),"iat":-1e300}"#, #"{"sub":"u1","exp":-1}"#,
            #"{"sub":"u1","exp":253402300800}"#, #"{"sub":"u1","exp":9223372036854775807}"#,
        ]
        for claims in cases {
            let token = try Self.signed(claims: claims)
            #expect(RejectionTests.code { try JWT.parse(token) } == .invalidClaims, "\(claims)")
            #expect(RejectionTests.code { try plain.verify(token) } == .invalidClaims, "\(claims)")
            #expect(RejectionTests.code { try lifetime.verify(token) } == .invalidClaims, "\(claims)")
        }
        // Claims built in code (not parsed) never trap either.
        #expect(RejectionTests.code { try lifetime.checkTimes(JWTClaims(exp: 1e300, nbf: 1e300, iat: -1e300)) } == .lifetimeTooLong)
        #expect(RejectionTests.code { try plain.checkTimes(JWTClaims(exp: Double(Self.now + 60), nbf: .infinity)) } == .notYetValid)
        #expect(RejectionTests.code { try plain.verify(Self.signed(claims: #"{"sub":"u1","exp":\#(Self.now + 60)}"#)) } == nil)
    }

    @Test func aRepeatedKeyInTheHeaderOrClaimsIsRefused() throws {
        let verifier = try Self.verifier()
        let exp = Self.now + 60
        let header = try Self.signed(header: #"{"alg":"HS256","kid":"a","kid":"b"}"#, claims: #"{"sub":"u1","exp":\#(exp)}"#)
        #expect(RejectionTests.code { try verifier.verify(header) } == .malformedToken)
        let claims = try Self.signed(claims: #"{"sub":"u1","sub":"admin","exp":\#(exp)}"#)
        #expect(RejectionTests.code { try verifier.verify(claims) } == .malformedToken)
        let nested = try Self.signed(claims: #"{"sub":"u1","exp":\#(exp),"ext":{"role":"a","role":"admin"}}"#)
        #expect(RejectionTests.code { try verifier.verify(nested) } == .malformedToken)
    }

    @Test func highSES256SignaturesAreRefusedAndNeverMade() throws {
        let key = try AsymmetricKey.privateKey(file: TestKeys.path("ec.p8"))
        let signer = try JWTSigner.es256(privateKey: key)
        let verifier = JWTVerifier(keys: [try .es256(key)], now: RejectionTests.at(Self.now))
        for index in 0..<8 {
            let token = try signer.sign(["exp": Self.now + 60, "n": index])
            let parts = token.split(separator: ".").map(String.init)
            let signature = try #require(Base64URL.decode(parts[2]))
            #expect(ECDSALowS.isLow(signature), "the signer makes low-S signatures only")
            #expect(RejectionTests.code { try verifier.verify(token) } == nil)
            let twin = ECDSALowS.twin(signature)  // n - s: mathematically valid too
            #expect(!ECDSALowS.isLow(twin))
            #expect(ECDSALowS.normalized(twin) == signature)
            #expect(ECDSALowS.twin(twin) == signature)
            let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode(twin)
            #expect(RejectionTests.code { try verifier.verify(forged) } == .badSignature)
        }
    }
}
