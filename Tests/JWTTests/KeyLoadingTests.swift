import Foundation
import Testing
import JWT

@Suite struct KeyLoadingTests {
    static func error(_ body: () throws -> Any) -> JWTError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? JWTError
        }
    }

    @Test func malformedPEMIsAnInvalidKeyNamingItsSource() {
        let garbage = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
        for (pem, problem) in [("", "empty"), ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "no PEM block"), (garbage, "not a readable")] {
            let error = Self.error { try AsymmetricKey.privateKey(pem: pem, source: "service account private_key") }
            #expect(error?.code == .invalidKey)
            #expect(error?.source == "service account private_key")
            #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
        }
    }

    @Test func publicKeyIsNotAPrivateKey() {
        let error = Self.error { try AsymmetricKey.privateKey(pem: TestKeys.pem("rsa.pub")) }
        #expect(error?.code == .invalidKey)
        let signing = Self.error { try JWTSigner.rs256(privateKey: try .publicKey(file: TestKeys.path("rsa.pub"))) }
        #expect(signing?.code == .invalidKey)
        #expect(signing?.problem.contains("private key is required") == true)
    }

    @Test func missingFileIsNamed() {
        let path = TestKeys.directory + "/AuthKey_MISSING.p8"
        let error = Self.error { try AsymmetricKey.privateKey(file: path) }
        #expect(error == JWTError(.invalidKey, "no such file", source: path))
    }

    @Test func encryptedKeyIsRefused() {
        let error = Self.error { try AsymmetricKey.privateKey(file: TestKeys.path("rsa-encrypted.pem")) }
        #expect(error?.code == .invalidKey)
        #expect(error?.problem.contains("encrypted") == true)
    }

    @Test func keyMustSuitTheAlgorithm() throws {
        let ec = try AsymmetricKey.privateKey(file: TestKeys.path("ec.p8"))
        let rsa = try AsymmetricKey.privateKey(file: TestKeys.path("rsa.pem"))
        #expect(Self.error { try JWTSigner.rs256(privateKey: ec) }?.code == .invalidKey)
        #expect(Self.error { try JWTSigner.es256(privateKey: rsa) }?.code == .invalidKey)
        #expect(Self.error { try VerificationKey.es256(rsa) }?.code == .invalidKey)
        let p384 = try AsymmetricKey.privateKey(file: TestKeys.path("ec-384.p8"))
        #expect(Self.error { try JWTSigner.es256(privateKey: p384) }?.problem.contains("P-256") == true)
        let weak = try AsymmetricKey.privateKey(file: TestKeys.path("rsa-1024.pem"))
        #expect(Self.error { try JWTSigner.rs256(privateKey: weak) }?.problem.contains("1024 bits") == true)
        #expect(Self.error { try JWTSigner.hs256(secret: Array("short".utf8)) }?.code == .invalidKey)
    }
}
