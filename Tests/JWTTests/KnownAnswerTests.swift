import Foundation
import Testing
@testable import JWT

@Suite struct KnownAnswerTests {
    // RFC 7515 appendix A.1: HS256 over exact header and payload bytes (with CRLF inside the JSON).
    static let header = Array("{\"typ\":\"JWT\",\r\n \"alg\":\"HS256\"}".utf8)
    static let payload = Array("{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}".utf8)
    static let key = Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")!
    static let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

    @Test func hs256MatchesRFC7515() throws {
        let signer = try JWTSigner.hs256(secret: Self.key)
        #expect(try signer.sign(headerJSON: Self.header, claimsJSON: Self.payload) == Self.token)
    }

    @Test func hs256VerifiesRFC7515TokenBeforeExpiry() throws {
        let verifier = JWTVerifier(keys: [try .hs256(secret: Self.key)], now: { Date(timeIntervalSince1970: 1_300_819_000) })
        let jwt = try verifier.verify(Self.token)
        #expect(jwt.claims.iss == "joe")
        #expect(jwt.claims.exp == 1_300_819_380)
        struct Custom: Decodable { let isRoot: Bool
            enum CodingKeys: String, CodingKey { case isRoot = "http://example.com/is_root" } }
        #expect(try jwt.decodeClaims(as: Custom.self).isRoot)
    }

    @Test func hs256RFC7515TokenIsExpiredToday() throws {
        let verifier = JWTVerifier(keys: [try .hs256(secret: Self.key)])
        let error = #expect(throws: JWTError.self) { try verifier.verify(Self.token) }
        #expect(error?.code == .expired)
    }

    @Test func rs256MatchesOpenSSLTool() throws {
        // RSASSA-PKCS1-v1_5 is deterministic, so our signature must equal the openssl tool's byte for byte.
        let signer = try JWTSigner.rs256(privateKey: try .privateKey(file: TestKeys.path("rsa.pem")))
        let token = try signer.sign(headerJSON: Array("{\"alg\":\"RS256\"}".utf8), claimsJSON: Array("{\"a\":1}".utf8))
        let parts = token.split(separator: ".")
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let expected = try TestKeys.openssl(["dgst", "-sha256", "-sign", TestKeys.path("rsa.pem")], input: input)
        #expect(Base64URL.decode(parts[2]) == expected)
    }

    @Test func es256SignatureVerifiesWithOpenSSLTool() throws {
        let signer = try JWTSigner.es256(privateKey: try .privateKey(file: TestKeys.path("ec.p8")), keyID: "KEY123")
        let token = try signer.sign(["iss": "TEAM"])
        let parts = token.split(separator: ".")
        let raw = try #require(Base64URL.decode(parts[2]))
        #expect(raw.count == 64)
        let signaturePath = TestKeys.directory + "/es256-\(UUID().uuidString).sig"
        try Data(try ECDSASignature(raw: raw).der()).write(to: URL(fileURLWithPath: signaturePath))
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let output = try TestKeys.openssl(
            ["dgst", "-sha256", "-verify", TestKeys.path("ec.pub"), "-signature", signaturePath], input: input)
        #expect(String(decoding: output, as: UTF8.self).contains("Verified OK"))
    }
}
