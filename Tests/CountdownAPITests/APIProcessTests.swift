import CountdownStore
import Foundation
import JWT
import Postgres
import Telemetry
import Testing
import TestSupport

@Suite("The countdown-api executable")
struct APIProcessTests {
    static let secret = "process-test-secret-0123456789abcdefghij"

    @Test func configurationProblemsAreOneLineEachAndExit2() throws {
        let none = try APIProcess.runToExit(environment: [:])
        #expect(none.status == 2)
        #expect(none.stderr.contains("DATABASE_URL"))
        #expect(none.stderr.contains("API_JWT_SECRET, API_JWT_PUBLIC_KEY_FILE, API_JWT_KEYS"))

        let bad = try APIProcess.runToExit(environment: [
            "DATABASE_URL": "mysql://x", "API_ADDR": "nowhere", "API_JWT_SECRET": "short", "LOG_LEVEL": "loud",
            "LOG_FORMAT": "xml", "SHUTDOWN_GRACE_SECONDS": "-1",
        ])
        #expect(bad.status == 2)
        let lines = bad.stderr.split(separator: "\n")
        #expect(lines.count == 6, "\(bad.stderr)")
        for variable in ["DATABASE_URL", "API_ADDR", "API_JWT_SECRET", "LOG_LEVEL", "LOG_FORMAT", "SHUTDOWN_GRACE_SECONDS"] {
            #expect(lines.contains { $0.contains(variable) }, "\(variable)")
        }
        #expect(!bad.stderr.contains("short"), "the secret is never printed")

        let both = try APIProcess.runToExit(environment: [
            "DATABASE_URL": "postgres://u@127.0.0.1:1/db", "API_JWT_SECRET": Self.secret, "API_JWT_PUBLIC_KEY_FILE": "/etc/hostname",
        ])
        #expect(both.status == 2)
        #expect(both.stderr.contains("exactly one"))

        let notAKey = try APIProcess.runToExit(environment: [
            "DATABASE_URL": "postgres://u@127.0.0.1:1/db", "API_JWT_PUBLIC_KEY_FILE": "/etc/hostname",
        ])
        #expect(notAKey.status == 2)
        #expect(notAKey.stderr.contains("API_JWT_PUBLIC_KEY_FILE"))
        #expect(try APIProcess.runToExit(environment: [:], arguments: ["--bogus"]).status == 2)
    }

    @Test func theHardeningVariablesAreValidatedAtStart() throws {
        let emptyDirectory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("nokeys"))
        try FileManager.default.createDirectory(atPath: emptyDirectory, withIntermediateDirectories: true)
        let bad = try APIProcess.runToExit(environment: [
            "DATABASE_URL": "postgres://u@127.0.0.1:1/db", "API_JWT_KEYS": "/nonexistent/jwks.json", "API_METRICS_ADDR": "nowhere",
            "API_TRUSTED_PROXIES": "10.0.0.0/40", "DATABASE_LOCK_TIMEOUT_MS": "-5", "API_JWT_MAX_LIFETIME_SECONDS": "soon",
            "API_WRITES_PER_MINUTE_PER_IP": "many", "API_MAX_CONNECTIONS": "8", "API_ANONYMOUS_WRITES_PER_MINUTE": "-1",
            "API_OWNERLESS_DEVICE_TTL_HOURS": "forever",
        ])
        #expect(bad.status == 2)
        let lines = bad.stderr.split(separator: "\n")
        for variable in ["API_JWT_KEYS", "API_METRICS_ADDR", "API_TRUSTED_PROXIES", "DATABASE_LOCK_TIMEOUT_MS", "API_JWT_MAX_LIFETIME_SECONDS",
                         "API_WRITES_PER_MINUTE_PER_IP", "API_MAX_CONNECTIONS", "API_ANONYMOUS_WRITES_PER_MINUTE",
                         "API_OWNERLESS_DEVICE_TTL_HOURS"] {
            #expect(lines.contains { $0.contains(variable) }, "\(variable) in \(bad.stderr)")
        }
        let empty = try APIProcess.runToExit(environment: ["DATABASE_URL": "postgres://u@127.0.0.1:1/db", "API_JWT_KEYS": emptyDirectory])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("API_JWT_KEYS") && empty.stderr.contains("no usable key"), "\(empty.stderr)")
    }

    @Test func servesOverHTTPEnforcesBodyLimitsAndStopsOnSIGTERM() async throws {
        let database = try await TestDatabase.create(prefix: "apiproc")
        let client = PostgresClient(configuration: database.configuration, maxConnections: 1)
        _ = try await Migrator().migrate(client)
        client.close()

        let api = try APIProcess(environment: ["DATABASE_URL": database.url, "API_JWT_SECRET": Self.secret, "LOG_LEVEL": "debug"])
        #expect(try await api.fetch("GET", "/healthz").status == 200)
        #expect(try await api.fetch("GET", "/readyz").status == 200)

        let json = ["Content-Type": "application/json"]
        let body = try JSONSerialization.data(withJSONObject: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID()])
        let registered = try await api.fetch("POST", "/notifications/device-token", body: body, headers: json)
        #expect(registered.status == 200)
        #expect(String(decoding: registered.body, as: UTF8.self) == #"{"success":true}"#)

        let big = Data(#"{"padding":""#.utf8) + Data(repeating: UInt8(ascii: "x"), count: 20_000) + Data(#""}"#.utf8)
        let tooLarge = try await api.fetch("POST", "/notifications/device-token", body: big, headers: json)
        #expect(tooLarge.status == 413)
        #expect(String(decoding: tooLarge.body, as: UTF8.self).contains("payload_too_large"))
        let huge = try await api.fetch("POST", "/notifications/device-token", body: Data(count: 200_000), headers: json)
        #expect(huge.status == 413)

        let signer = try JWTSigner.hs256(secret: Array(Self.secret.utf8))
        let token = try signer.sign(TestAPI.Claims(sub: "nobody", exp: Date().timeIntervalSince1970 + 60))
        let session = try JSONSerialization.data(withJSONObject: ["streamId": "s1", "deviceId": Sample.deviceID(), "liveActivityToken": Sample.hexToken()])
        #expect(try await api.fetch("POST", "/notifications/live-activity-sessions", body: session, headers: json).status == 401)
        let authed = json.merging(["Authorization": "Bearer \(token)"]) { _, new in new }
        #expect(try await api.fetch("POST", "/notifications/live-activity-sessions", body: session, headers: authed).status == 403, "unknown user")

        #expect(try await api.fetch("GET", "/metrics").status == 404, "metrics are not on the public port")
        let metrics = String(decoding: try await api.fetch("GET", "/metrics", port: api.metricsPort).body, as: UTF8.self)
        #expect(metrics.contains(#"countdown_api_requests_total{route="/notifications/device-token",method="POST",status="413"} 1"#))
        #expect(metrics.contains("countdown_build_info{version=\"\(BuildInfo.version)\"} 1"))
        // The listening line names the version. A request may be logged before it: the server answers as soon as
        // it is bound, and the line that reports the bound address is written just after.
        let listening = api.stderr.split(separator: "\n").first { $0.contains("\"msg\":\"listening\"") }
        #expect(listening?.contains("\"version\":\"\(BuildInfo.version)\"") == true, "\(api.stderr)")

        #expect(api.stop() == 0)
        let log = api.stderr
        #expect(log.contains("\"stopped\""))
        #expect(!log.contains(token), "bearer tokens are never logged")
        #expect(!log.contains(Self.secret))
        try await database.drop()
    }

    @Test func rs256KeysComeFromThePublicKeyFile() async throws {
        let key = try RSAKeys.shared()
        let path = try RSAKeys.writePublicKey(key)
        let api = try APIProcess(environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "API_JWT_PUBLIC_KEY_FILE": path])
        let claims = TestAPI.Claims(sub: "u1", exp: Date().timeIntervalSince1970 + 60)
        let rs = try JWTSigner.rs256(privateKey: key).sign(claims)
        let hs = try JWTSigner.hs256(secret: Array(Self.secret.utf8)).sign(claims)
        // The database is unreachable: an accepted token gets as far as 503, a refused one stops at 401.
        #expect(try await api.fetch("POST", "/live-stream/s1/cancel", headers: ["Authorization": "Bearer \(rs)"]).status == 503)
        #expect(try await api.fetch("POST", "/live-stream/s1/cancel", headers: ["Authorization": "Bearer \(hs)"]).status == 401)
        #expect(try await api.fetch("GET", "/readyz").status == 503)
        #expect(api.stop() == 0)
    }

    /// The same process through the multi-call `countdown` (as the image runs it): the stop signals are blocked before
    /// any thread starts there too, so SIGTERM drains the API instead of killing it.
    @Test func stopsCleanlyOnSIGTERMThroughTheMultiCallExecutable() async throws {
        let api = try APIProcess(environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "API_JWT_SECRET": Self.secret],
                                 program: ["countdown", "api"])
        #expect(try await api.fetch("GET", "/healthz").status == 200)
        #expect(api.stop() == 0)
        #expect(api.stderr.contains("\"stopped\""), "\(api.stderr)")
        #expect(api.stderr.contains("\"component\":\"countdown-api\""), "\(api.stderr)")
    }
}
