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

    /// A fresh 2048-bit private key, loaded from the scratch file it is kept in (its `source`).
    static func generate() throws -> AsymmetricKey {
        let path = scratchPath("jwtkey")
        try runCommand("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path])
        return try AsymmetricKey.privateKey(file: path)
    }

    /// The public half of a key from `generate`, as `BEGIN PUBLIC KEY` PEM text.
    static func publicKeyPEM(_ key: AsymmetricKey) throws -> String {
        try runCommand("/usr/bin/openssl", ["pkey", "-in", key.source, "-pubout"])
    }

    /// Writes the public half of a key from `generate` to a scratch file and returns its path.
    static func writePublicKey(_ key: AsymmetricKey) throws -> String {
        let path = scratchPath("jwtpub")
        try publicKeyPEM(key).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func scratchPath(_ prefix: String) -> String {
        (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName(prefix) + ".pem")
    }
}
