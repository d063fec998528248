import Foundation
import HTTPClient
import JWT
import Push
import Testing

@Suite struct ServiceAccountTests {
    static func error<E: Error>(as type: E.Type = JWTError.self, _ body: () throws -> Any) -> E? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? E
        }
    }

    @Test func readsTheFieldsFCMNeeds() throws {
        let path = PushTestKeys.serviceAccountFile(tokenURI: "https://oauth2.googleapis.com/token", project: "allmine-prod")
        let account = try ServiceAccount.load(file: path)
        #expect(account.projectID == "allmine-prod")
        #expect(account.clientEmail == "push@allmine-prod.iam.gserviceaccount.com")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(account.privateKeyID == "k1")
        #expect(account.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(account.source == path)
    }

    @Test func missingFileIsNamed() {
        let path = PushTestKeys.directory + "/nope.json"
        #expect(Self.error { try ServiceAccount.load(file: path) } == JWTError(.invalidServiceAccount, "no such file", source: path))
    }

    @Test func notJSONIsNamed() {
        let path = PushTestKeys.write("project_id = x", named: "not-json.json")
        #expect(Self.error { try ServiceAccount.load(file: path) } == JWTError(.invalidServiceAccount, "not a JSON object", source: path))
    }

    @Test(arguments: ["project_id", "client_email", "private_key", "token_uri"])
    func missingFieldIsNamed(field: String) {
        let path = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: [field: nil])
        let error = Self.error { try ServiceAccount.load(file: path) }
        #expect(error == JWTError(.invalidServiceAccount, "missing", source: path, field: field))
        #expect(error?.description == "invalidServiceAccount (\(path)): field \(field): missing")
    }

    @Test func wrongValuesAreNamed() {
        let empty = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["client_email": " "])
        #expect(Self.error { try ServiceAccount.load(file: empty) }?.field == "client_email")
        let number = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["project_id": 42])
        #expect(Self.error { try ServiceAccount.load(file: number) } == JWTError(.invalidServiceAccount, "must be a non-empty string", source: number, field: "project_id"))
        let type = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["type": "authorized_user"])
        #expect(Self.error { try ServiceAccount.load(file: type) }?.field == "type")
        let uri = PushTestKeys.serviceAccountFile(tokenURI: "oauth2.googleapis.com/token")
        #expect(Self.error { try ServiceAccount.load(file: uri) }?.field == "token_uri")
        let notPEM = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["private_key": "MIIEv..."])
        #expect(Self.error { try ServiceAccount.load(file: notPEM) } == JWTError(.invalidServiceAccount, "is not a PEM private key", source: notPEM, field: "private_key"))
    }

    @Test func unreadablePrivateKeyFailsTheProviderNamingFileAndField() throws {
        let broken = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        let path = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["private_key": broken])
        let account = try ServiceAccount.load(file: path)
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(500) }
        let error = Self.error(as: PushError.self) { try FCMAccessTokenProvider(account: account, http: http) }
        #expect(error?.code == .invalidCredentials)
        #expect(error?.file == path)
        #expect(error?.field == "private_key")
    }

    @Test func ecKeyIsNotAServiceAccountKey() throws {
        let p8 = try String(contentsOfFile: PushTestKeys.p8Path, encoding: .utf8)
        let path = PushTestKeys.serviceAccountFile(tokenURI: "https://t.example/token", overrides: ["private_key": p8])
        let error = Self.error(as: PushError.self) { try FCMAccessTokenProvider(account: try ServiceAccount.load(file: path), http: ScriptedHTTP { _, _ in ScriptedHTTP.response(500) }) }
        #expect(error?.field == "private_key")
        #expect(error?.message.contains("RS256") == true)
    }
}
