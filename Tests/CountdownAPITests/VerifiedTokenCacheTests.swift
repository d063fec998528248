import BlockingIO
@testable import CountdownAPI
import Foundation
import HTTPServer
import HTTPTypes
import JWT
import Telemetry
import Testing

@Suite("Verified bearer tokens are remembered, their time window is not")
struct VerifiedTokenCacheTests {
    static let secret = Array("verified-token-cache-test-secret-0123456789".utf8)
    let clock = Locked(Date(timeIntervalSince1970: 1_900_000_000))
    let signer: JWTSigner

    init() throws {
        signer = try JWTSigner.hs256(secret: Self.secret)
    }

    struct Claims: Encodable {
        var sub: String
        var role: String?
        var exp: Double
    }

    func authenticator(capacity: Int = 10_000) -> Authenticator {
        let clock = clock
        return try! Authenticator(verifier: JWTVerifier(keys: [.hs256(secret: Self.secret)], leeway: .seconds(30), now: { clock.value }),
                                  cacheCapacity: capacity)
    }

    func request(_ token: String) -> HTTPRequest {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer " + token
        return HTTPRequest(method: "POST", path: "/", headers: headers, body: Data())
    }

    @Test func aRepeatedTokenComesFromTheCacheWithTheSameCaller() throws {
        let auth = authenticator()
        let token = try signer.sign(Claims(sub: "u1", role: "admin", exp: clock.value.timeIntervalSince1970 + 600))
        #expect(try auth.caller(of: request(token)) == Caller(userID: "u1", isAdmin: true))
        #expect(auth.cache.count == 1)
        #expect(try auth.caller(of: request(token)) == Caller(userID: "u1", isAdmin: true))
        #expect(auth.cache.count == 1)
    }

    @Test func aCachedTokenStillExpires() throws {
        let auth = authenticator()
        let token = try signer.sign(Claims(sub: "u1", exp: clock.value.timeIntervalSince1970 + 60))
        #expect(try auth.caller(of: request(token))?.userID == "u1")
        clock.withLock { $0 = $0.addingTimeInterval(60 + 31) }  // past exp and the leeway
        let error = #expect(throws: APIError.self) { try auth.caller(of: request(token)) }
        #expect(error?.code == .unauthorized)
        #expect(error?.message.contains("expired") == true)
    }

    @Test func forgedTokensNeverEnterTheCache() throws {
        let auth = authenticator()
        let forged = try JWTSigner.hs256(secret: Array("another-secret-another-secret-000".utf8))
            .sign(Claims(sub: "u1", exp: clock.value.timeIntervalSince1970 + 600))
        #expect(throws: APIError.self) { try auth.caller(of: request(forged)) }
        #expect(auth.cache.count == 0)
    }

    @Test func theCacheIsBounded() throws {
        let auth = authenticator(capacity: 3)
        for user in 0..<10 {
            let token = try signer.sign(Claims(sub: "u\(user)", exp: clock.value.timeIntervalSince1970 + 600))
            #expect(try auth.caller(of: request(token))?.userID == "u\(user)")
            #expect(auth.cache.count <= 3)
        }
    }

    @Test func aKeyRotationVerifiesCachedTokensAgain() throws {
        let path = NSTemporaryDirectory() + "jwks-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        func publish(kid: String) throws {
            let jwks = #"{"keys":[{"kty":"oct","kid":"\#(kid)","k":"\#(Base64URL.encode(Self.secret))"}]}"#
            try jwks.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try publish(kid: "2025")
        let clock = clock
        let keys = try JWTKeySource(fixedKeys: [], keysPath: path, checkInterval: .zero, logger: Logger(level: .error)) {
            JWTVerifier(keys: $0, leeway: .seconds(30), now: { clock.value })
        }
        let auth = Authenticator(keys: keys)
        let token = try JWTSigner.hs256(secret: Self.secret, keyID: "2025").sign(Claims(sub: "u1", exp: clock.value.timeIntervalSince1970 + 600))
        #expect(try auth.caller(of: request(token))?.userID == "u1")
        #expect(auth.cache.count == 1)

        try publish(kid: "2026")  // the same secret under another kid: the 2025 key is withdrawn
        #expect(keys.current().generation == 1)
        let error = #expect(throws: APIError.self) { try auth.caller(of: request(token)) }
        #expect(error?.code == .unauthorized, "a token verified under the old key set is not taken from the cache")

        try "not json".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(keys.current().generation == 1, "a broken key set leaves the last good one in use")
    }
}
