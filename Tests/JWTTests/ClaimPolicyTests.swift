import Foundation
import JWT
import Testing

@Suite("Issuer, crit, size and lifetime rules")
struct ClaimPolicyTests {
    static let now = 1_776_384_000
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    struct Claims: Encodable {
        var iss: String?
        var exp: Int
        var iat: Int?
        var pad: String?
    }

    func verifier(issuer: String? = nil, maxLifetime: Duration? = nil) throws -> JWTVerifier {
        var verifier = JWTVerifier(keys: [try .hs256(secret: Self.secret)], leeway: .seconds(30),
                                   now: { Date(timeIntervalSince1970: TimeInterval(ClaimPolicyTests.now)) })
        verifier.issuer = issuer
        verifier.maxLifetime = maxLifetime
        return verifier
    }

    func sign(_ claims: Claims) throws -> String { try JWTSigner.hs256(secret: Self.secret).sign(claims) }

    @Test func theIssuerMustMatchWhenSet() throws {
        let ours = try sign(Claims(iss: "https://auth.example", exp: Self.now + 60))
        let theirs = try sign(Claims(iss: "https://other.example", exp: Self.now + 60))
        let none = try sign(Claims(exp: Self.now + 60))
        let checked = try verifier(issuer: "https://auth.example")
        #expect(RejectionTests.code { try checked.verify(ours) } == nil)
        #expect(RejectionTests.code { try checked.verify(theirs) } == .wrongIssuerOrAudience)
        #expect(RejectionTests.code { try checked.verify(none) } == .wrongIssuerOrAudience)
        #expect(RejectionTests.code { try verifier().verify(theirs) } == nil, "not checked unless set")
    }

    @Test func aCritHeaderIsRefused() throws {
        let good = try sign(Claims(exp: Self.now + 60))
        let parts = good.split(separator: ".")
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT","crit":["exp"]}"#.utf8))
        let token = header + "." + parts[1] + "." + parts[2]
        #expect(RejectionTests.code { try verifier().verify(token) } == .criticalHeader)
    }

    @Test func tokensOverTheSizeLimitAreRefusedUnparsed() throws {
        let big = try sign(Claims(exp: Self.now + 60, pad: String(repeating: "x", count: 9000)))
        #expect(big.utf8.count > JWTVerifier.defaultMaxTokenBytes)
        #expect(RejectionTests.code { try verifier().verify(big) } == .tokenTooLarge)
        #expect(RejectionTests.code { try verifier().verify(String(repeating: "a", count: 100_000)) } == .tokenTooLarge)
    }

    @Test func theLifetimeIsBoundedWhenSet() throws {
        let hour = try sign(Claims(exp: Self.now + 3600, iat: Self.now))
        let decades = try sign(Claims(exp: Self.now + 31 * 365 * 86400))
        let longIssued = try sign(Claims(exp: Self.now + 600, iat: Self.now - 2 * 86400))
        let bounded = try verifier(maxLifetime: .seconds(86400))
        #expect(RejectionTests.code { try bounded.verify(hour) } == nil)
        #expect(RejectionTests.code { try bounded.verify(decades) } == .lifetimeTooLong)
        #expect(RejectionTests.code { try bounded.verify(longIssued) } == .lifetimeTooLong, "exp - iat counts too")
        #expect(RejectionTests.code { try verifier().verify(decades) } == nil, "unbounded unless set")
    }
}
