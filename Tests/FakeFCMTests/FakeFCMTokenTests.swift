import Foundation
import JWT
import Testing
import TestSupport

@Suite struct FakeFCMTokenTests {
    @Test func announcesItsPortAndServesTheTokenURIPath() async throws {
        let fake = try FakeFCMProcess()
        #expect(fake.port > 0)
        #expect(fake.listening["address"] as? String == "127.0.0.1:\(fake.port)")
        #expect(fake.listening["tokenPaths"] as? [String] == ["/oauth2/v4/token", "/token"])
        let client = FakeFCMClient(fake)
        for path in ["/token", "/oauth2/v4/token"] {
            let answer = try await client.exchange(assertion: try Assertion.sign(for: fake), path: path)
            #expect(answer.status == 200)
            #expect((answer.json["access_token"] as? String)?.isEmpty == false)
            #expect(answer.json["expires_in"] as? Int == 3600)
            #expect(answer.json["token_type"] as? String == "Bearer")
        }
        #expect(try await client.call("GET", "/fake/stats").json["tokensIssued"] as? Int == 2)
    }

    @Test func accessTokensExpireAfterTheGivenTTL() async throws {
        let fake = try FakeFCMProcess(arguments: ["--token-ttl", "2"])
        let client = FakeFCMClient(fake)
        let clock = ContinuousClock()
        let issued = clock.now
        let answer = try await client.exchange(assertion: try Assertion.sign(for: fake))
        #expect(answer.json["expires_in"] as? Int == 2)
        let token = try #require(answer.json["access_token"] as? String)
        let early = try await client.send(Messages.reminder(), bearer: token, project: fake.project).status
        if clock.now - issued < .milliseconds(1500) {  // on a loaded machine the first send may come too late to tell
            #expect(early == 200)
        }
        try await waitUntil(timeout: .seconds(6), every: .milliseconds(100), "the access token to expire") {
            try await client.send(Messages.reminder(), bearer: token, project: fake.project).status == 401
        }
        #expect(clock.now - issued >= .seconds(2))
    }

    static let otherKey: String = {
        let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("otherkey") + ".pem")
        _ = try? runCommand("/usr/bin/env", ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path])
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }()

    enum BadAssertion: String, CaseIterable {
        case badSignature, wrongAudience, expired, tooLong, issuedInTheFuture, wrongIssuer, missingScope, garbage
    }

    @Test(arguments: BadAssertion.allCases)
    func badAssertionsAreRefusedLikeGoogle(_ kind: BadAssertion) async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let now = Int(Date().timeIntervalSince1970)
        let assertion: String
        switch kind {
        case .badSignature: assertion = try Assertion.sign(for: fake, pem: Self.otherKey)
        case .wrongAudience: assertion = try Assertion.sign(for: fake) { $0.aud = "https://oauth2.googleapis.com/token" }
        case .expired: assertion = try Assertion.sign(for: fake) { $0.iat = now - 7200; $0.exp = now - 3600 }
        case .tooLong: assertion = try Assertion.sign(for: fake) { $0.exp = $0.iat + 7200 }
        case .issuedInTheFuture: assertion = try Assertion.sign(for: fake) { $0.iat = now + 600; $0.exp = now + 1200 }
        case .wrongIssuer: assertion = try Assertion.sign(for: fake) { $0.iss = "someone@else.iam.gserviceaccount.com" }
        case .missingScope: assertion = try Assertion.sign(for: fake) { $0.scope = "https://www.googleapis.com/auth/cloud-platform" }
        case .garbage: assertion = "not.a.jwt"
        }
        let answer = try await client.exchange(assertion: assertion)
        #expect(answer.status == 400)
        #expect(answer.json["error"] as? String == (kind == .missingScope ? "invalid_scope" : "invalid_grant"))
        #expect((answer.json["error_description"] as? String)?.isEmpty == false)
        #expect(answer.json["access_token"] == nil)
        #expect(try await client.call("GET", "/fake/stats").json["tokensRefused"] as? Int == 1)
    }

    @Test func malformedTokenRequestsNameTheProblem() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let wrongGrant = try await client.exchange(assertion: try Assertion.sign(for: fake), grantType: "client_credentials")
        #expect(wrongGrant.status == 400)
        #expect(wrongGrant.json["error"] as? String == "unsupported_grant_type")
        let missing = try await client.call("POST", "/token", body: Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8))
        #expect(missing.json["error"] as? String == "invalid_request")
        #expect(try await client.call("GET", "/token").status == 405)
    }
}
