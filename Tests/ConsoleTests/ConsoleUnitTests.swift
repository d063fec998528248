import CountdownAPI
@testable import CountdownConsole
@testable import CountdownStore
import Foundation
import HTTPServer
import HTTPTypes
import JWT
import CountdownMaintenance
import Synchronization
import Telemetry
import Testing

@Suite("Console: CSRF tokens")
struct CSRFTokenTests {
    let key = Array("0123456789abcdef0123456789abcdef".utf8)

    @Test func aTokenIsValidForItsUserOnly() {
        let tokens = CSRFTokens(key: key)
        let token = tokens.issue(for: "ada")
        #expect(tokens.isValid(token, for: "ada"))
        #expect(!tokens.isValid(token, for: "bob"))
    }

    @Test func missingForgedOrOtherKeysAreRefused() {
        let tokens = CSRFTokens(key: key)
        let token = tokens.issue(for: "ada")
        #expect(!tokens.isValid(nil, for: "ada"))
        #expect(!tokens.isValid("", for: "ada"))
        #expect(!tokens.isValid("1700000000." + String(repeating: "0", count: 64), for: "ada"))
        var forged = Array(token)
        forged[forged.count - 1] = forged.last == "a" ? "b" : "a"
        #expect(!tokens.isValid(String(forged), for: "ada"))
        #expect(!tokens.isValid(String(token.dropLast()), for: "ada"), "a shortened MAC is refused")
        #expect(!tokens.isValid(token + "0", for: "ada"), "a lengthened MAC is refused")
        #expect(!CSRFTokens(key: CSRFTokens.randomKey()).isValid(token, for: "ada"))
    }

    @Test func tokensExpire() {
        let issuedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let token = CSRFTokens(key: key, now: { issuedAt }).issue(for: "ada")
        #expect(CSRFTokens(key: key, now: { issuedAt.addingTimeInterval(3600) }).isValid(token, for: "ada"))
        #expect(!CSRFTokens(key: key, now: { issuedAt.addingTimeInterval(CSRFTokens.lifetime + 1) }).isValid(token, for: "ada"))
    }
}

@Suite("Console: roles, escaping, masking")
struct ConsoleRulesTests {
    @Test func operatorGroupsMakeOperators() {
        #expect(ConsoleUser(name: "a", groups: ["staff", "oncall"], operatorGroups: ["oncall"]).role == .operator)
        #expect(ConsoleUser(name: "a", groups: ["staff"], operatorGroups: ["oncall"]).role == .viewer)
        #expect(ConsoleUser(name: "a", groups: [], operatorGroups: []).role == .viewer)
        #expect(!ConsoleUser(name: "a", groups: ["staff"], operatorGroups: ["oncall"]).mayAct)
    }

    @Test func interpolatedValuesAreEscaped() {
        let title = "<script>alert('x')</script> & \"q\""
        let html: HTML = "<td title=\"\(title)\">\(title)</td>"
        #expect(html.text == "<td title=\"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;\">"
            + "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;</td>")
        let nested: HTML = "<p>\(html)</p>"
        #expect(nested.text == "<p>" + html.text + "</p>")
    }

    @Test func tokensAreMaskedToTheirLastEightCharacters() {
        #expect(Redact.token("abcdefghijklmnopqrstuvwxyz") == "…stuvwxyz")
        #expect(Redact.token("short") == "…")
        #expect(Redact.token("0123456789abcdef") == "…", "16 characters or fewer: masked whole")
        #expect(Redact.token("0123456789abcdefg") == "…9abcdefg")
        let device = ConsoleReadQueries.Device(
            deviceID: "d", userID: "u", platform: "ios", fcmToken: "fcm-0123456789-ABCDEFGH", pushToStartToken: "pts-0123456789-12345678",
            timezone: nil, locale: nil, createdAt: Date(), updatedAt: Date())
        let page = ConsolePages.Device(device: device, startDecisions: [], sessions: [
            ConsoleReadQueries.Session(streamID: "s", deviceID: "d", userID: "u", token: "runtime-0123456789-RUNTIME1", updatedAt: Date()),
        ], invalidations: [
            ConsoleReadQueries.Invalidation(id: 1, deviceID: "d", token: "fcm", value: "old-0123456789-OLDVALUE", reason: "unregistered", streamID: nil,
                                          invalidatedAt: Date(), restoredAt: nil),
        ]).masked()
        #expect(page.device.fcmToken == "…ABCDEFGH")
        #expect(page.device.pushToStartToken == "…12345678")
        #expect(page.sessions[0].token == "…RUNTIME1")
        #expect(page.invalidations[0].value == "…OLDVALUE")
    }

    @Test func actionsParseFromTheirPaths() {
        for action in [ConsoleAction.cancelStream("s/1 x"), .retryDead("start:s1"), .dropDead("end:s:d"), .retryQuarantine("k1"),
                       .dropQuarantine("k 2")] {
            let decoded = action.path.removingPercentEncoding ?? ""
            #expect(ConsoleAction.parse(path: decoded, field: { _ in nil }) == action)
        }
        #expect(ConsoleAction.parse(path: "/pause", field: { $0 == "kind" ? "" : nil }) == .pause(kind: nil))
        #expect(ConsoleAction.parse(path: "/resume", field: { $0 == "kind" ? "start" : nil }) == .resume(kind: "start"))
        #expect(ConsoleAction.parse(path: "/tokens/restore", field: { $0 == "since" ? "2h" : nil }) == .restoreTokens(since: "2h"))
        #expect(ConsoleAction.parse(path: "/streams/s1", field: { _ in nil }) == nil)
    }
}

@Suite("Console: authentication")
struct ConsoleAuthenticationTests {
    let proxy = try! ConsoleAuthenticator(
        mode: .proxy(userHeader: "X-Forwarded-User", groupsHeader: "X-Forwarded-Groups", trusted: TrustedProxies(parsing: "10.0.0.0/8, ::1")),
        operatorGroups: ["oncall"])

    func request(from peer: String, _ headers: [(String, String)]) -> HTTPRequest {
        HTTPRequest(method: "GET", path: "/", headers: HTTPHeaders(headers.map { (name: $0.0, value: $0.1) }), remoteAddress: peer)
    }

    @Test func proxyHeadersFromATrustedAddressSignIn() throws {
        let user = try proxy.user(of: request(from: "10.1.2.3:5555", [("X-Forwarded-User", "ada"), ("X-Forwarded-Groups", "staff, oncall")]))
        #expect(user == ConsoleUser(name: "ada", groups: ["staff", "oncall"], operatorGroups: ["oncall"]))
        #expect(user.role == .operator)
        #expect(try proxy.user(of: request(from: "[::1]:5555", [("X-Forwarded-User", "bob")])).role == .viewer)
    }

    @Test func proxyHeadersFromAnyOtherAddressAre401() {
        #expect(throws: ConsoleError.self) {
            try proxy.user(of: request(from: "192.168.1.9:5555", [("X-Forwarded-User", "ada"), ("X-Forwarded-Groups", "oncall")]))
        }
        #expect(throws: ConsoleError.self) { try proxy.user(of: request(from: "10.0.0.1:1", [])) }
        #expect(throws: ConsoleError.self) { try proxy.user(of: request(from: "", [("X-Forwarded-User", "ada")])) }
    }

    @Test func bearerTokensGiveTheUserAndGroups() throws {
        let secret = Array("a-secret-that-is-at-least-32-bytes-long".utf8)
        let verifier = JWTVerifier(keys: [try .hs256(secret: secret)], leeway: .seconds(30), requireExpiry: true)
        let keys = try JWTKeySource(fixedKeys: verifier.keys, keysPath: nil, logger: Logger(level: .error)) { _ in verifier }
        let jwt = ConsoleAuthenticator(mode: .jwt(keys), operatorGroups: ["oncall"])
        struct Claims: Encodable { var sub: String; var groups: [String]; var exp: Double }
        let token = try JWTSigner.hs256(secret: secret).sign(Claims(sub: "ada", groups: ["oncall"], exp: Date().timeIntervalSince1970 + 600))
        let user = try jwt.user(of: request(from: "127.0.0.1:1", [("Authorization", "Bearer \(token)")]))
        #expect(user.name == "ada" && user.role == .operator)
        #expect(throws: ConsoleError.self) { try jwt.user(of: request(from: "127.0.0.1:1", [("Authorization", "Bearer \(token)x")])) }
        #expect(throws: ConsoleError.self) { try jwt.user(of: request(from: "127.0.0.1:1", [])) }
        // A control character in sub (NUL above all) is refused, as the API refuses it.
        for sub in ["ada\u{0}", "a\u{7}da", "ada\n", "ada\u{7F}"] {
            let bad = try JWTSigner.hs256(secret: secret).sign(Claims(sub: sub, groups: ["oncall"], exp: Date().timeIntervalSince1970 + 600))
            #expect(throws: ConsoleError.self, "\(sub.debugDescription)") {
                try jwt.user(of: request(from: "127.0.0.1:1", [("Authorization", "Bearer \(bad)")]))
            }
        }
    }

    @Test func repeatedOrControlCharacterProxyHeadersAre401() {
        let peer = "10.1.2.3:5555"
        for headers in [
            [("X-Forwarded-User", "ada"), ("X-Forwarded-User", "mallory")],
            [("X-Forwarded-User", "mallory"), ("x-forwarded-user", "ada")],
            [("X-Forwarded-User", "ada"), ("X-Forwarded-Groups", "staff"), ("X-Forwarded-Groups", "oncall")],
            [("X-Forwarded-User", "ada\u{1}")],
            [("X-Forwarded-User", "ada"), ("X-Forwarded-Groups", "on\u{0}call")],
        ] {
            #expect(throws: ConsoleError.self, "\(headers)") { try proxy.user(of: request(from: peer, headers)) }
        }
    }
}

@Suite("Console: times")
struct ConsoleTimesTests {
    let now = Date(timeIntervalSince1970: 1_796_546_116)  // 2026-12-06T08:35:16Z

    @Test func absoluteInTheZoneAndRelativeToNow() throws {
        let utc = ConsoleTimes(now: now)
        #expect(utc.absolute(now) == "2026-12-06 08:35 UTC" && utc.absolute(now, seconds: true) == "2026-12-06 08:35:16 UTC")
        let istanbul = utc.inZone(try #require(ConsoleTimes.zone(named: "Europe/Istanbul")))
        #expect(istanbul.absolute(now) == "2026-12-06 11:35 +03:00")
        let kolkata = utc.inZone(try #require(ConsoleTimes.zone(named: "Asia/Kolkata")))
        #expect(kolkata.absolute(now.addingTimeInterval(16 * 3600)) == "2026-12-07 06:05 +05:30", "the date turns with the zone")
        #expect(utc.inZone(try #require(ConsoleTimes.zone(named: "America/New_York"))).absolute(now) == "2026-12-06 03:35 -05:00")
        #expect(utc.relative(now.addingTimeInterval(49 * 60)) == "in 49 min")
        #expect(utc.relative(now.addingTimeInterval(-10)) == "now")
        #expect(utc.relative(now.addingTimeInterval(-45)) == "45 s ago")
        #expect(utc.relative(now.addingTimeInterval(-(3 * 3600 + 5 * 60))) == "3 h 5 min ago")
        #expect(utc.relative(now.addingTimeInterval(2 * 86_400 + 4 * 3600)) == "in 2 d 4 h")
    }

    @Test func onlyRealZoneNamesAreTaken() {
        #expect(ConsoleTimes.zone(named: "UTC") != nil && ConsoleTimes.zone(named: "Europe/Istanbul") != nil)
        for name in ["", "Mars/Olympus", "../etc/passwd", "Europe/Istanbul\u{0}", String(repeating: "A", count: 65)] {
            #expect(ConsoleTimes.zone(named: name) == nil, "\(name)")
        }
    }
}

@Suite("Console: the fleet's verdict and charts")
struct FleetVerdictTests {
    static func page(dead: Int = 0, late: Double = 0, workers: [WorkerHeartbeat]? = nil, paused: [PauseQueries.Entry] = []) -> ConsolePages.Fleet {
        let json = """
            {"delayed": 0, "dueNow": 0, "leased": 0, "dead": \(dead), "oldestLatenessSeconds": \(late), "jobsByKind": {}, "outboxBacklog": 0,
             "outboxOldestAgeSeconds": 0, "recentStartResults": {}, "recentAndroidStartResults": {}, "androidEndsLastHour": {},
             "remindersSentLastHour": 0, "streamsByStatus": {}, "paused": [], "pausedJobs": 0, "pausedInRedisOnly": []}
            """
        let stats = try! JSONDecoder().decode(SystemStats.self, from: Data(json.utf8))
        return ConsolePages.Fleet(stats: stats, quarantined: 0, paused: paused, workers: workers, tokenGuard: nil)
    }

    @Test func healthyDegradedOrPausedAndWhy() {
        #expect(FleetVerdict.of(Self.page()).state == "healthy")
        let degraded = FleetVerdict.of(Self.page(dead: 2, late: 90, workers: [WorkerHeartbeat(id: "w", heartbeatAgeSeconds: 40, alive: false)]))
        #expect(degraded.state == "degraded")
        #expect(degraded.reasons == ["no worker is alive: nothing is claiming jobs", "the oldest due job is 90 s late", "2 dead letter(s) wait for an operator"])
        let paused = FleetVerdict.of(Self.page(dead: 1, paused: [PauseQueries.Entry(kind: "start", paused: true, actor: "ada", reason: "APNs down", since: Date())]))
        #expect(paused.state == "paused" && paused.reasons == ["start paused by ada: APNs down", "1 dead letter(s) wait for an operator"])
    }

    @Test func chartsBucketTheLastHourPerMinute() {
        let now = Date(timeIntervalSince1970: 1_800_000_030)
        let values = ConsoleChart.buckets([(now, 2), (now.addingTimeInterval(-60), 3), (now, 1), (now.addingTimeInterval(-7200), 9)], now: now)
        #expect(values.count == 60 && values[59] == 3 && values[58] == 3 && values.reduce(0, +) == 6, "older than an hour is left out")
        let svg = ConsoleChart(title: "T <x>", unit: "pushes", series: [.init(name: "start ios", values: values)]).svg.text
        #expect(svg.contains("<polyline") && svg.contains("start ios: 6 pushes") && svg.contains("T &lt;x&gt;") && !svg.contains("style="))
    }
}

@Suite("Console: the audit limit")
struct AuditLimiterTests {
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func eachUserGetsTheLimitPerMinuteAndRefusalsAreCounted() {
        let clock = Clock()
        let limiter = AuditLimiter(perMinute: 3, now: { clock.now.withLock { $0 } })
        for _ in 0..<3 { #expect(limiter.decide(for: "vic") == .admit) }
        #expect(limiter.decide(for: "vic") == .refuse(count: 1, insertSummary: true, summaryRow: nil))
        limiter.summaryWritten(for: "vic", row: 42)
        #expect(limiter.decide(for: "vic") == .refuse(count: 2, insertSummary: false, summaryRow: 42))
        #expect(limiter.refusals(of: "vic") == 2)
        #expect(limiter.decide(for: "ada") == .admit, "another user has a limit of their own")
        #expect(limiter.minuteLabel() == "08:00")
        clock.now.withLock { $0 = $0.addingTimeInterval(60) }
        #expect(limiter.decide(for: "vic") == .admit, "a new minute starts over")
        #expect(limiter.refusals(of: "vic") == 0)
    }
}
