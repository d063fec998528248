import Foundation

/// A throwaway PKI made with the `openssl` command: a CA, a server certificate for `localhost` and `127.0.0.1`,
/// a client certificate, and a second CA that signed nothing (to prove an untrusted chain is refused).
public struct TestCertificates: Sendable {
    public let directory: String
    public var caFile: String { "\(directory)/ca.crt" }
    public var serverCertificateFile: String { "\(directory)/server.crt" }
    public var serverKeyFile: String { "\(directory)/server.key" }
    public var clientCertificateFile: String { "\(directory)/client.crt" }
    public var clientKeyFile: String { "\(directory)/client.key" }
    /// A CA that signed none of the above.
    public var otherCAFile: String { "\(directory)/other-ca.crt" }

    /// Makes every file in a fresh scratch directory (private keys mode 0600, as PostgreSQL requires).
    public init() throws {
        directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("pki"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try makeCA("ca", name: "Countdown Test CA")
        try makeCA("other-ca", name: "Unrelated CA")
        try makeLeaf("server", name: "localhost", extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try makeLeaf("client", name: "countdown-test-client", extensions: "extendedKeyUsage=clientAuth\n")
    }

    private func makeCA(_ stem: String, name: String) throws {
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=\(name)", "-keyout", "\(directory)/\(stem).key", "-out", "\(directory)/\(stem).crt",
        ])
    }

    private func makeLeaf(_ stem: String, name: String, extensions: String) throws {
        let extensionsFile = "\(directory)/\(stem).ext"
        try extensions.write(toFile: extensionsFile, atomically: true, encoding: .utf8)
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=\(name)",
            "-keyout", "\(directory)/\(stem).key", "-out", "\(directory)/\(stem).csr",
        ])
        try openssl([
            "x509", "-req", "-in", "\(directory)/\(stem).csr", "-CA", caFile, "-CAkey", "\(directory)/ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", extensionsFile, "-out", "\(directory)/\(stem).crt",
        ])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: "\(directory)/\(stem).key")
    }

    private func openssl(_ arguments: [String]) throws {
        try runCommand("/usr/bin/openssl", arguments, outputPath: "\(directory)/openssl.log")
    }
}

extension ThrowawayRedis {
    /// A server that only speaks TLS on its port (`--port 0 --tls-port`), with `certificates`' server certificate.
    /// `requireClientCertificates` makes it refuse clients without a certificate signed by the CA.
    public static func startTLS(
        _ certificates: TestCertificates, requireClientCertificates: Bool = false, extraArguments: [String] = []
    ) async throws -> ThrowawayRedis {
        try await start(extraArguments: extraArguments, tlsArguments: [
            "--tls-cert-file", certificates.serverCertificateFile, "--tls-key-file", certificates.serverKeyFile,
            "--tls-ca-cert-file", certificates.caFile, "--tls-auth-clients", requireClientCertificates ? "yes" : "no",
        ])
    }

    /// `rediss://127.0.0.1:port/db` for a server from `startTLS`.
    public func tlsURL(credentials: String = "", database: Int = 0) -> String {
        "rediss://\(credentials.isEmpty ? "" : credentials + "@")127.0.0.1:\(port)/\(database)"
    }
}
