import BlockingIO
import CountdownStore
import Foundation
import JWT
import Postgres
import Testing
import TestSupport

/// Every finding of the attack review, replayed against a real `countdown-api` process and PostgreSQL.
@Suite("Attacks on countdown-api", .serialized)
struct AttackTests {
    static let secret = "attack-test-secret-0123456789abcdefghijkl"
    static let json = ["Content-Type": "application/json"]

    struct Claims: Encodable {
        var sub: String
        var exp: Double
        var iss: String?
        var aud: String?
        var iat: Double?
    }

    /// A migrated database with users u1 and u2, and the API on it with `environment` added.
    static func withAPI(_ environment: [String: String] = [:], _ body: (APIProcess, PostgresClient) async throws -> Void) async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"])
            let api = try APIProcess(environment: ["DATABASE_URL": fixture.database.url, "API_JWT_SECRET": secret]
                .merging(environment) { _, new in new })
            try await body(api, fixture.client)
            #expect(api.stop() == 0)
        }
    }

    /// Registers `device` while another session holds its row lock; the reply and how long it took.
    static func registerWhileLocked(_ api: APIProcess, _ database: PostgresClient, device: String, bearer: String) async throws
        -> (reply: (status: Int, body: Data, headers: [String: String]), elapsed: Duration) {
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await database.transaction { connection in
                try connection.execute("SELECT 1 FROM devices WHERE device_id = $1 FOR UPDATE", [device])
                locked.signal()
                release.wait()
            }
        }
        try await waitUntil(timeout: .seconds(5), "the row is locked") { locked.wait(timeout: .now()) == .success }
        let clock = ContinuousClock()
        let start = clock.now
        let reply = try await register(api, device: device, bearer: bearer)
        let elapsed = start.duration(to: clock.now)
        release.signal()
        try await holder.value
        return (reply, elapsed)
    }

    static func token(_ claims: Claims, keyID: String? = nil) throws -> String {
        try JWTSigner.hs256(secret: Array(secret.utf8), keyID: keyID).sign(claims)
    }

    static func hourToken(_ user: String) throws -> String {
        try token(Claims(sub: user, exp: Date().timeIntervalSince1970 + 3600))
    }

    static func register(_ api: APIProcess, device: String, token fcm: String = Sample.fcmToken(), bearer: String? = nil) async throws
        -> (status: Int, body: Data, headers: [String: String]) {
        var headers = json
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        let body = try JSONSerialization.data(withJSONObject: ["token": fcm, "platform": "ios", "deviceId": device])
        return try await api.fetch("POST", "/notifications/device-token", body: body, headers: headers)
    }

    static func errorCode(_ body: Data) -> String? {
        ((try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func anUnauthenticatedTakeoverIsRefusedAndWritesNothing() async throws {
        try await Self.withAPI { api, database in
            let device = Sample.deviceID()
            let owners = try Self.hourToken("u1")
            let fcm = Sample.fcmToken()
            #expect(try await Self.register(api, device: device, token: fcm, bearer: owners).status == 200)
            let attack = try await Self.register(api, device: device, token: Sample.fcmToken())
            #expect(attack.status == 401)
            #expect(attack.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(Self.errorCode(attack.body) == "unauthorized")
            let row = try await database.query("SELECT user_id, fcm_token FROM devices WHERE device_id = $1", [device]).first
            #expect(try row?.decode("user_id", as: String.self) == "u1")
            #expect(try row?.decode("fcm_token", as: String.self) == fcm)
            #expect(try await Self.register(api, device: device, bearer: try Self.hourToken("u2")).status == 200, "a login takes it over")
        }
    }

    @Test func tokensFromOtherIssuersAudiencesOrWithCritOrTooLongLivedAreRefused() async throws {
        let environment = ["API_JWT_ISSUER": "https://auth.example", "API_JWT_AUDIENCE": "countdown-api", "API_JWT_MAX_LIFETIME_SECONDS": "86400"]
        try await Self.withAPI(environment) { api, _ in
            let now = Date().timeIntervalSince1970
            let good = Claims(sub: "u1", exp: now + 3600, iss: "https://auth.example", aud: "countdown-api")
            var otherIssuer = good
            otherIssuer.iss = "https://elsewhere.example"
            var otherAudience = good
            otherAudience.aud = "billing"
            var decades = good
            decades.exp = now + 31 * 365 * 86400
            #expect(try await Self.register(api, device: Sample.deviceID(), bearer: try Self.token(good)).status == 200)
            for claims in [otherIssuer, otherAudience, decades] {
                let reply = try await Self.register(api, device: Sample.deviceID(), bearer: try Self.token(claims))
                #expect(reply.status == 401)
                #expect(Self.errorCode(reply.body) == "unauthorized")
            }
            let parts = try Self.token(good).split(separator: ".")
            let crit = Base64URL.encode(Array(#"{"alg":"HS256","crit":["exp"]}"#.utf8)) + "." + parts[1] + "." + parts[2]
            #expect(try await Self.register(api, device: Sample.deviceID(), bearer: crit).status == 401)

            // Over 8 KiB: a JSON 401 (not parsed); over the header limit: a JSON 431, never libmicrohttpd's HTML.
            let big = String(repeating: "a", count: 9000)
            let tooLarge = try await Self.register(api, device: Sample.deviceID(), bearer: big)
            #expect(tooLarge.status == 401)
            #expect(String(decoding: tooLarge.body, as: UTF8.self).contains("too large"))
            let huge = try await Self.register(api, device: Sample.deviceID(), bearer: String(repeating: "a", count: 30_000))
            #expect(huge.status == 431)
            #expect(Self.errorCode(huge.body) == "headers_too_large")
            #expect(!String(decoding: huge.body, as: UTF8.self).contains("<html"))
        }
    }

    @Test func keysAreRotatedWithoutARestart() async throws {
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("jwks"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let old = try RSAKeys.shared()
        let new = try RSAKeys.generate()
        try RSAKeys.publicKeyPEM(old).write(toFile: directory + "/2025.pem", atomically: true, encoding: .utf8)
        try await Self.withAPI(["API_JWT_SECRET": "", "API_JWT_KEYS": directory]) { api, _ in
            let claims = Claims(sub: "u1", exp: Date().timeIntervalSince1970 + 3600)
            let oldToken = try JWTSigner.rs256(privateKey: old, keyID: "2025").sign(claims)
            let newToken = try JWTSigner.rs256(privateKey: new, keyID: "2026").sign(claims)
            let device = Sample.deviceID()
            #expect(try await Self.register(api, device: device, bearer: oldToken).status == 200)
            #expect(try await Self.register(api, device: device, bearer: newToken).status == 401)

            try RSAKeys.publicKeyPEM(new).write(toFile: directory + "/2026.pem", atomically: true, encoding: .utf8)
            try await waitUntil(timeout: .seconds(20), every: .milliseconds(500), "the new key is picked up") {
                try await Self.register(api, device: device, bearer: newToken).status == 200
            }
            try FileManager.default.removeItem(atPath: directory + "/2025.pem")
            try await waitUntil(timeout: .seconds(20), every: .milliseconds(500), "the withdrawn key stops working, cached or not") {
                try await Self.register(api, device: device, bearer: oldToken).status == 401
            }
            #expect(try await Self.register(api, device: device, bearer: newToken).status == 200)
            #expect(api.stderr.contains("JWT keys reloaded"))
        }
    }

    @Test func aTricklingClientIsClosedAtTheRequestDeadline() async throws {
        try await Self.withAPI(["API_REQUEST_READ_TIMEOUT_SECONDS": "2"]) { api, _ in
            let connection = try RawSocket(port: api.port)
            let request = "POST /notifications/device-token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
                + String(repeating: " ", count: 500)
            let clock = ContinuousClock()
            let start = clock.now
            var sent = 0
            for byte in request {
                guard !connection.peerClosed, (try? connection.send(String(byte))) != nil else { break }
                sent += 1
                try await Task.sleep(for: .milliseconds(200))  // well inside the 15 s idle timeout
                if start.duration(to: clock.now) > .seconds(8) { break }
            }
            let elapsed = start.duration(to: clock.now)
            #expect(sent < request.count, "the server closed the connection before the request was complete")
            #expect(elapsed < .seconds(5), "closed at about 2 s, took \(elapsed)")
            #expect(elapsed > .seconds(1))
            #expect(try await api.fetch("GET", "/healthz").status == 200, "others are served meanwhile")
            let metrics = String(decoding: try await api.fetch("GET", "/metrics", port: api.metricsPort).body, as: UTF8.self)
            #expect(metrics.contains("countdown_api_slow_requests_closed_total 1"))
        }
    }

    @Test func connectionsPerAddressAreLimited() async throws {
        try await Self.withAPI(["API_MAX_CONNECTIONS_PER_IP": "3"]) { api, _ in
            let held = try (0..<3).map { _ in try RawSocket(port: api.port) }
            for socket in held { try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") }
            for socket in held { #expect(socket.readStatus() == 200) }
            let fourth = try RawSocket(port: api.port, receiveTimeout: 3)
            try? fourth.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(fourth.readStatus() == nil, "the fourth connection is not served")
            #expect(held.allSatisfy { !$0.peerClosed }, "the first three stay open")
        }
    }

    @Test func aLockHeldElsewhereGets503WithinTheDeadline() async throws {
        try await Self.withAPI(["DATABASE_LOCK_TIMEOUT_MS": "1000", "API_REQUEST_TIMEOUT_SECONDS": "3"]) { api, database in
            let device = Sample.deviceID()
            let bearer = try Self.hourToken("u1")
            #expect(try await Self.register(api, device: device, bearer: bearer).status == 200)
            let (reply, elapsed) = try await Self.registerWhileLocked(api, database, device: device, bearer: bearer)
            #expect(reply.status == 503)
            #expect(reply.headers["retry-after"] != nil)
            #expect(Self.errorCode(reply.body) == "timeout")
            #expect(elapsed < .seconds(3), "answered by the lock timeout (1 s), before the 3 s deadline: \(elapsed)")
            #expect(try await Self.register(api, device: device, bearer: bearer).status == 200, "fine once the lock is gone")
        }
    }

    @Test func withoutSessionLimitsTheRequestDeadlineStillAnswers() async throws {
        let environment = ["DATABASE_LOCK_TIMEOUT_MS": "0", "DATABASE_STATEMENT_TIMEOUT_MS": "0", "API_REQUEST_TIMEOUT_SECONDS": "2"]
        try await Self.withAPI(environment) { api, database in
            let device = Sample.deviceID()
            let bearer = try Self.hourToken("u1")
            #expect(try await Self.register(api, device: device, bearer: bearer).status == 200)
            let (reply, elapsed) = try await Self.registerWhileLocked(api, database, device: device, bearer: bearer)
            #expect(reply.status == 503)
            #expect(reply.headers["retry-after"] != nil)
            #expect(elapsed < .seconds(4), "the 2 s deadline answered: \(elapsed)")
        }
    }

    @Test func writesPastTheAddressLimitAre429() async throws {
        try await Self.withAPI(["API_WRITES_PER_MINUTE_PER_IP": "3"]) { api, _ in
            for _ in 0..<3 { #expect(try await Self.register(api, device: Sample.deviceID()).status == 200) }
            let limited = try await Self.register(api, device: Sample.deviceID())
            #expect(limited.status == 429)
            #expect(Self.errorCode(limited.body) == "rate_limited")
            #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)
            #expect(try await api.fetch("GET", "/healthz").status == 200, "reads are not limited")
        }
    }

    @Test func readinessSaysNothingAboutTheDatabaseAndMetricsAreNotPublic() async throws {
        let api = try APIProcess(environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/secretdb", "API_JWT_SECRET": Self.secret])
        let ready = try await api.fetch("GET", "/readyz")
        #expect(ready.status == 503)
        let body = String(decoding: ready.body, as: UTF8.self)
        #expect(Self.errorCode(ready.body) == "unavailable")
        for detail in ["127.0.0.1", "secretdb", "5432", ":1", "nobody", "PostgreSQL"] { #expect(!body.contains(detail), "\(detail) in \(body)") }
        #expect(ready.headers["retry-after"] != nil)
        let publicMetrics = try await api.fetch("GET", "/metrics")
        #expect(publicMetrics.status == 404)
        #expect(Self.errorCode(publicMetrics.body) == "not_found")
        let metrics = try await api.fetch("GET", "/metrics", port: api.metricsPort)
        #expect(metrics.status == 200)
        // Every countdown_api_* family of the metric catalog is exported (the worker's end-to-end test checks the rest).
        let exported = String(decoding: metrics.body, as: UTF8.self)
        let catalog = try String(contentsOf: FakeFCMProcess.repositoryRoot.appendingPathComponent("deploy/metrics.txt"), encoding: .utf8)
        let families = Set(catalog.split(separator: "\n").filter { $0.hasPrefix("countdown_api_") }.map { line -> String in
            var name = String(line.prefix { $0 != "{" })
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) { name = String(name.dropLast(suffix.count)) }
            return name
        })
        #expect(families.count >= 9)
        for family in families { #expect(exported.contains("# TYPE \(family) "), "deploy/metrics.txt lists \(family)") }
        #expect(try await api.fetch("GET", "/healthz", port: api.metricsPort).status == 404, "the metrics port serves only /metrics")
        #expect(api.stop() == 0)
        #expect(api.stderr.contains("not ready: PostgreSQL does not answer"), "the details are in the log")
    }
}
