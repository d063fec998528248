import Foundation

extension Environment {
    /// A PEM file of CA certificates to trust (e.g. `APNS_CA_FILE`), or nil when the variable is unset or empty.
    /// - Throws: `ConfigError` naming the variable when the file is unreadable or holds no `BEGIN CERTIFICATE` block.
    public func optionalCertificateFile(_ name: String) throws -> String? {
        guard optionalString(name) != nil else { return nil }
        let path = try file(name)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") else {
            throw ConfigError(.invalid, variable: name, problem: "file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return path
    }
}
