import CountdownAPI
import Foundation
import JWT
import Testing

@Suite("Bearer token authentication")
struct AuthTests {
    let store = InMemoryAPIStore()
    let api: TestAPI
    let deviceID = Sample.deviceID()

    init() throws {
        api = try TestAPI(store: store)
        let deviceID = deviceID
        store.state.withLock {
            $0.users = ["u1", "admin1"]
            $0.streams["s1"] = .init(status: "scheduled", creator: "u1")
            $0.devices[deviceID] = .init(userID: "u1", platform: "ios")
        }
    }

    /// A request that needs auth and otherwise succeeds.
    func removeSession(bearer: String?, headers: [(String, String)] = []) async -> TestAPI.Reply {
        await api.send("DELETE", "/notifications/live-activity-sessions/s1/\(deviceID)", bearer: bearer, headers: headers)
    }

    @Test func validHS256TokenIsAccepted() async throws {
        #expect(await removeSession(bearer: try api.token("u1")).status == 204)
    }

    @Test func missingHeaderIs401WithChallenge() async throws {
        let reply = await removeSession(bearer: nil)
        #expect(reply.status == 401)
        #expect(reply.errorCode == "unauthorized")
        #expect(reply.headers["WWW-Authenticate"] == "Bearer")
        #expect(reply.json["success"] as? Bool == false)
    }

    @Test func otherSchemesAreRefused() async throws {
        let token = try api.token("u1")
        #expect(await removeSession(bearer: nil, headers: [("Authorization", "Basic \(token)")]).status == 401)
        #expect(await removeSession(bearer: nil, headers: [("Authorization", "Bearer")]).status == 401)
        #expect(await removeSession(bearer: nil, headers: [("Authorization", "bearer \(token)")]).status == 204)
    }

    @Test func algNoneIsRefused() async throws {
        let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"sub":"u1","exp":1900003600}"#.utf8))
        for token in ["\(header).\(claims).", "\(header).\(claims)"] {
            let reply = await removeSession(bearer: token)
            #expect(reply.status == 401)
        }
    }

    @Test func wrongAlgorithmIsRefused() async throws {
        let rsa = try RSAKeys.shared()
        let rsToken = try JWTSigner.rs256(privateKey: rsa).sign(TestAPI.Claims(sub: "u1", exp: TestAPI.now.timeIntervalSince1970 + 60))
        let reply = await removeSession(bearer: rsToken)
        #expect(reply.status == 401)
        #expect(reply.errorMessage.contains("algorithm"))
    }

    @Test func badSignatureIsRefused() async throws {
        let other = try JWTSigner.hs256(secret: Array("another-secret-that-is-long-enough-0123456".utf8))
        let forged = try other.sign(TestAPI.Claims(sub: "u1", exp: TestAPI.now.timeIntervalSince1970 + 60))
        #expect(await removeSession(bearer: forged).status == 401)
        // A valid token whose claims were swapped for an admin's keeps its signature: refused.
        let parts = try api.token("u1").split(separator: ".")
        let tampered = "\(parts[0]).\(Base64URL.encode(Array(#"{"exp":1900003600,"role":"admin","sub":"u1"}"#.utf8))).\(parts[2])"
        #expect(await removeSession(bearer: tampered).status == 401)
    }

    @Test func malformedTokensAreRefused() async throws {
        for token in ["abc", "a.b.c", "....", String(repeating: "x", count: 5000), "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln"] {
            #expect(await removeSession(bearer: token).status == 401, "\(token.prefix(20))")
        }
    }

    @Test func expiryIsEnforcedWithSmallLeeway() async throws {
        let now = TestAPI.now.timeIntervalSince1970
        #expect(await removeSession(bearer: try api.token("u1", exp: now - 10)).status == 204)
        let expired = await removeSession(bearer: try api.token("u1", exp: now - 31))
        #expect(expired.status == 401)
        #expect(expired.errorMessage.contains("expired"))
        #expect(await removeSession(bearer: try api.token("u1", exp: nil)).status == 401)
    }

    @Test func notBeforeIsEnforced() async throws {
        let now = TestAPI.now.timeIntervalSince1970
        #expect(await removeSession(bearer: try api.token("u1", nbf: now + 10)).status == 204)
        let early = await removeSession(bearer: try api.token("u1", nbf: now + 120))
        #expect(early.status == 401)
        #expect(early.errorMessage.contains("not valid yet"))
    }

    @Test func tokenWithoutSubjectIsRefused() async throws {
        let token = try api.signer.sign(TestAPI.Claims(sub: nil, exp: TestAPI.now.timeIntervalSince1970 + 60))
        #expect(await removeSession(bearer: token).status == 401)
    }

    @Test func adminRoleComesFromTheToken() async throws {
        #expect(await api.send("POST", "/live-stream/s1/cancel", bearer: try api.token("admin1")).status == 403)
        #expect(await api.send("POST", "/live-stream/s1/cancel", bearer: try api.token("admin1", role: "admin")).succeeded)
    }

    @Test func rs256TokensAreVerifiedWithThePublicKey() async throws {
        let rsa = try RSAKeys.shared()
        let rsAPI = try TestAPI(store: store, rsaKey: rsa)
        let path = "/notifications/live-activity-sessions/s1/\(deviceID)"
        #expect(await rsAPI.send("DELETE", path, bearer: try rsAPI.token("u1")).status == 204)
        #expect(await rsAPI.send("DELETE", path, bearer: try api.token("u1")).status == 401, "an HS256 token on an RS256 API")
        let other = try RSAKeys.generate()
        let foreign = try JWTSigner.rs256(privateKey: other).sign(TestAPI.Claims(sub: "u1", exp: TestAPI.now.timeIntervalSince1970 + 60))
        #expect(await rsAPI.send("DELETE", path, bearer: foreign).status == 401, "signed by another key")
        let expired = try rsAPI.token("u1", exp: TestAPI.now.timeIntervalSince1970 - 120)
        #expect(await rsAPI.send("DELETE", path, bearer: expired).status == 401)
    }

    @Test func tokensNeverReachTheLogs() async throws {
        let token = try api.token("u1")
        _ = await removeSession(bearer: token)
        _ = await removeSession(bearer: token + "x")
        let logged = api.logs.lines.joined()
        #expect(!logged.isEmpty)
        #expect(!logged.contains(token.split(separator: ".")[2]))
        #expect(!logged.contains(String(token.prefix(20))))
    }
}
