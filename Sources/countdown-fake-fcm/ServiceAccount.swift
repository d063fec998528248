import Foundation

/// The fields of a Google service-account JSON file the fake needs.
struct ServiceAccount: Decodable, Sendable {
    let type: String
    let projectID: String
    let privateKeyID: String?
    let privateKey: String
    let clientEmail: String
    let tokenURI: String

    enum CodingKeys: String, CodingKey {
        case type
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    /// Reads and checks the file; errors name the file and the field.
    static func load(path: String) throws(UsageError) -> ServiceAccount {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read the service account file \(path)")
        }
        let account: ServiceAccount
        do {
            account = try JSONDecoder().decode(ServiceAccount.self, from: data)
        } catch {
            throw UsageError("service account \(path) is not valid: \(Self.describe(error))")
        }
        guard account.type == "service_account" else { throw UsageError("service account \(path): type must be \"service_account\"") }
        for (name, value) in [("project_id", account.projectID), ("client_email", account.clientEmail), ("token_uri", account.tokenURI)] where value.isEmpty {
            throw UsageError("service account \(path): \(name) is empty")
        }
        guard let url = URL(string: account.tokenURI), url.scheme != nil, !url.path.isEmpty else {
            throw UsageError("service account \(path): token_uri \"\(account.tokenURI)\" is not a URL with a path")
        }
        return account
    }

    /// The path part of `token_uri`, which the fake serves besides `/token`.
    var tokenPath: String { URL(string: tokenURI)?.path ?? "/token" }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        default: "not JSON"
        }
    }
}
