import Foundation
import JWT
import Synchronization
import TestSupport

/// RSA key pairs made with the `openssl` command (generated once per run, written where tests can point
/// `API_JWT_PUBLIC_KEY_FILE` at them).
enum RSAKeys {
    private static let cached = Mutex<AsymmetricKey?>(nil)

    /// One 2048-bit key for the whole run.
    static func shared() throws -> AsymmetricKey {
        try cached.withLock { key in
            if let key { return key }
            let made = try generate()
            key = made
            return made
        }
    }

    /// A fresh 2048-bit private key.
    static func generate() throws -> AsymmetricKey {
        let pem = try runCommand("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        return try AsymmetricKey.privateKey(pem: pem, source: "test RSA key")
    }

    /// Writes the public half of `key` to a scratch file and returns its path.
    static func writePublicKey(_ key: AsymmetricKey) throws -> String {
        let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("jwtpub") + ".pem")
        try key.publicKeyPEM().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
