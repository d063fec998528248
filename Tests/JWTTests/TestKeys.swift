import Foundation
import TestSupport

/// Throwaway keys generated once per test run with the `openssl` command line tool.
enum TestKeys {
    static let directory: String = {
        let path = NSTemporaryDirectory() + "jwt-test-keys-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let commands: [[String]] = [
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(path)/rsa.pem"],
            ["pkey", "-in", "\(path)/rsa.pem", "-pubout", "-out", "\(path)/rsa.pub"],
            ["genrsa", "-traditional", "-out", "\(path)/rsa-pkcs1.pem", "2048"],
            ["genrsa", "-out", "\(path)/rsa-1024.pem", "1024"],
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(path)/ec.p8"],
            ["pkey", "-in", "\(path)/ec.p8", "-pubout", "-out", "\(path)/ec.pub"],
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "\(path)/ec-384.p8"],
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes256", "-pass", "pass:secret",
             "-out", "\(path)/rsa-encrypted.pem"],
        ]
        for arguments in commands { try! openssl(arguments) }
        return path
    }()

    static func path(_ name: String) -> String { directory + "/" + name }

    static func pem(_ name: String) -> String {
        try! String(contentsOfFile: path(name), encoding: .utf8)
    }

    /// Runs the openssl tool, returning its standard output.
    @discardableResult
    static func openssl(_ arguments: [String], input: [UInt8]? = nil) throws -> [UInt8] {
        // Files, not pipes: a pipe end inherited by a sibling process would keep this waiting forever.
        let base = NSTemporaryDirectory() + "openssl-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: base + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: base + ".in", contents: Data(input ?? []))
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".in")
        }
        let process = try SpawnedProcess(
            "/usr/bin/openssl", arguments, stdin: input == nil ? .null : .file(base + ".in"), stdout: .file(base + ".out"))
        let status = process.waitBlocking(deadline: Date().addingTimeInterval(120)) ?? process.stop(grace: .zero)
        guard status == 0 else {
            throw OpenSSLToolFailed(arguments: arguments, status: status)
        }
        let data = (try? Data(contentsOf: URL(fileURLWithPath: base + ".out"))) ?? Data()
        return Array(data)
    }
}

struct OpenSSLToolFailed: Error {
    let arguments: [String]
    let status: Int32
}
