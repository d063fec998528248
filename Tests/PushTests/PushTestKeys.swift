import Foundation
import TestSupport

/// Throwaway keys and service-account files, generated once per run with the openssl tool.
enum PushTestKeys {
    static let directory: String = {
        let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("push-keys"))
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try! runCommand("/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(path)/sa.pem"])
        try! runCommand("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(path)/AuthKey_TESTKEY123.p8"])
        return path
    }()

    static var rsaPEM: String { try! String(contentsOfFile: directory + "/sa.pem", encoding: .utf8) }
    static var p8Path: String { directory + "/AuthKey_TESTKEY123.p8" }
    static var rsaPath: String { directory + "/sa.pem" }

    /// Writes a service-account JSON whose token endpoint is `tokenURI`; returns its path.
    static func serviceAccountFile(tokenURI: String, project: String = "countdown-test", overrides: [String: Any?] = [:]) -> String {
        var object: [String: Any] = [
            "type": "service_account", "project_id": project, "private_key_id": "k1",
            "private_key": rsaPEM, "client_email": "push@\(project).iam.gserviceaccount.com", "token_uri": tokenURI,
        ]
        for (key, value) in overrides { object[key] = value }
        let path = directory + "/" + TestEnvironment.uniqueName("sa") + ".json"
        try! JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func write(_ text: String, named name: String) -> String {
        let path = directory + "/" + name
        try! text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
