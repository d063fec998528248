import Foundation
import JWT
import Testing

@Suite("Keys from a JWKS")
struct JSONWebKeySetTests {
    struct Claims: Encodable { let exp: Int }

    /// The RSA modulus of `rsa.pem` as base64url, from the openssl tool.
    static func rsaModulus() throws -> String {
        let output = String(decoding: try TestKeys.openssl(["rsa", "-in", TestKeys.path("rsa.pem"), "-modulus", "-noout"]), as: UTF8.self)
        let hex = output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "Modulus=", with: "")
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return Base64URL.encode(bytes)
    }

    /// x and y of `ec.p8`'s public point (the last 64 bytes of its DER SubjectPublicKeyInfo).
    static func ecPoint() throws -> (x: String, y: String) {
        let der = try TestKeys.openssl(["pkey", "-in", TestKeys.path("ec.p8"), "-pubout", "-outform", "DER"])
        let point = Array(der.suffix(64))
        return (Base64URL.encode(point.prefix(32)), Base64URL.encode(point.suffix(32)))
    }

    @Test func rsaECAndOctKeysVerifyTokensByKid() throws {
        let (x, y) = try Self.ecPoint()
        let secret = Array("jwks-oct-secret-0123456789abcdefghij".utf8)
        let jwks: [String: Any] = ["keys": [
            ["kty": "RSA", "kid": "rsa-2026", "alg": "RS256", "use": "sig", "n": try Self.rsaModulus(), "e": "AQAB"],
            ["kty": "EC", "kid": "ec-2026", "crv": "P-256", "x": x, "y": y],
            ["kty": "oct", "kid": "hs-2026", "k": Base64URL.encode(secret)],
            ["kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"],
        ]]
        let keys = try JSONWebKeySet.keys(from: try JSONSerialization.data(withJSONObject: jwks), source: "test")
        #expect(keys.map(\.keyID) == ["rsa-2026", "ec-2026", "hs-2026"], "keys for encryption are skipped")
        let verifier = JWTVerifier(keys: keys, now: { Date(timeIntervalSince1970: 1_776_384_000) })
        let claims = Claims(exp: 1_776_384_060)
        let rsa = try JWTSigner.rs256(privateKey: try .privateKey(file: TestKeys.path("rsa.pem")), keyID: "rsa-2026").sign(claims)
        let ec = try JWTSigner.es256(privateKey: try .privateKey(file: TestKeys.path("ec.p8")), keyID: "ec-2026").sign(claims)
        let hs = try JWTSigner.hs256(secret: secret, keyID: "hs-2026").sign(claims)
        for token in [rsa, ec, hs] { #expect(RejectionTests.code { try verifier.verify(token) } == nil) }
        let unknownKid = try JWTSigner.rs256(privateKey: try .privateKey(file: TestKeys.path("rsa.pem")), keyID: "rsa-2025").sign(claims)
        #expect(RejectionTests.code { try verifier.verify(unknownKid) } == .badSignature)
    }

    @Test func aTokenWithoutKidNeedsTheOnlyKeyOfItsAlgorithm() throws {
        let secret = Array("jwks-oct-secret-0123456789abcdefghij".utf8)
        let other = Array("jwks-oct-secret-other-456789abcdefghij".utf8)
        let claims = Claims(exp: 1_776_384_060)
        let noKid = try JWTSigner.hs256(secret: secret).sign(claims)
        let now: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_776_384_000) }
        let one = JWTVerifier(keys: [try .hs256(secret: secret, keyID: "hs-2026")], now: now)
        #expect(RejectionTests.code { try one.verify(noKid) } == nil, "one key: a token without kid is checked against it")
        let two = JWTVerifier(keys: [try .hs256(secret: secret, keyID: "hs-2026"), try .hs256(secret: other, keyID: "hs-2027")], now: now)
        #expect(RejectionTests.code { try two.verify(noKid) } == .badSignature, "two keys: the token must name one")
        let wrongKid = try JWTSigner.hs256(secret: secret, keyID: "hs-2025").sign(claims)
        #expect(RejectionTests.code { try one.verify(wrongKid) } == .badSignature, "a kid that names no key is refused")
    }

    @Test func malformedSetsAreErrorsNamingTheKey() throws {
        func problem(_ json: String) -> String? {
            do {
                _ = try JSONWebKeySet.keys(from: Data(json.utf8), source: "keys.json")
                return nil
            } catch let error as JWTError {
                return error.description
            } catch {
                return "\(error)"
            }
        }
        #expect(problem("[]")?.contains("not a JWKS") == true)
        #expect(problem(#"{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}"#)?.contains("no kid") == true)
        #expect(problem(#"{"keys":[{"kty":"oct","kid":"a","k":"c2hvcnQ"}]}"#)?.contains("32 bytes") == true)
        #expect(problem(#"{"keys":[{"kty":"EC","kid":"a","crv":"P-384","x":"AA","y":"AA"}]}"#)?.contains("P-256") == true)
        #expect(problem(#"{"keys":[{"kty":"oct","kid":"a","k":"x"},{"kty":"oct","kid":"a","k":"x"}]}"#) != nil)
    }
}
