import Foundation
import JSON

/// The fields of a Google service-account JSON file (`GOOGLE_APPLICATION_CREDENTIALS`) that the OAuth JWT-bearer
/// grant needs: who signs the assertion, with which key, for which token endpoint. The FCM transport signs with
/// it; the fake FCM checks assertions against it.
public struct ServiceAccount: Sendable, Equatable {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyPEM: String
    /// Written as the assertion's `kid` when present.
    public let privateKeyID: String?
    public let tokenURI: String
    /// The file it was read from, for error messages.
    public let source: String

    public init(projectID: String, clientEmail: String, privateKeyPEM: String, privateKeyID: String? = nil, tokenURI: String, source: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.privateKeyID = privateKeyID
        self.tokenURI = tokenURI
        self.source = source
    }

    /// Reads and checks a service-account file.
    /// - Throws: `JWTError.invalidServiceAccount` naming the file and, when one is at fault, the field.
    public static func load(file path: String) throws -> ServiceAccount {
        try parse(Array(try JWTError.contents(of: path, code: .invalidServiceAccount)), source: path)
    }

    /// Parses service-account JSON; `source` names it in errors.
    public static func parse(_ json: [UInt8], source: String) throws -> ServiceAccount {
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(json)) else {
            throw JWTError(.invalidServiceAccount, "not a JSON object", source: source)
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] else { throw JWTError(.invalidServiceAccount, "missing", source: source, field: name) }
            guard let text = value.string, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw JWTError(.invalidServiceAccount, "must be a non-empty string", source: source, field: name)
            }
            return text
        }
        if let type = object["type"]?.string, type != "service_account" {
            throw JWTError(.invalidServiceAccount, "is \"\(type)\", expected \"service_account\"", source: source, field: "type")
        }
        let tokenURI = try field("token_uri")
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw JWTError(.invalidServiceAccount, "must be an http(s) URL", source: source, field: "token_uri")
        }
        let privateKey = try field("private_key")
        guard privateKey.contains("-----BEGIN") else {
            throw JWTError(.invalidServiceAccount, "is not a PEM private key", source: source, field: "private_key")
        }
        return ServiceAccount(
            projectID: try field("project_id"), clientEmail: try field("client_email"), privateKeyPEM: privateKey,
            privateKeyID: object["private_key_id"]?.string, tokenURI: tokenURI, source: source)
    }

    /// The path part of `token_uri` (`/token` when it has none).
    public var tokenPath: String {
        URL(string: tokenURI).map(\.path).flatMap { $0.isEmpty ? nil : $0 } ?? "/token"
    }
}
