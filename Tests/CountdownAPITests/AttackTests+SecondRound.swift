import CountdownAPI
import Foundation
import JWT
import Postgres
import Testing
import TestSupport

/// The second attack review, replayed against a real `countdown-api` process and PostgreSQL.
extension AttackTests {
    static func post(_ api: APIProcess, _ body: [String: Any], bearer: String? = nil) async throws
        -> (status: Int, body: Data, headers: [String: String]) {
        var headers = json
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return try await api.fetch("POST", "/notifications/device-token", body: try JSONSerialization.data(withJSONObject: body), headers: headers)
    }

    static func deviceRow(_ database: PostgresClient, _ device: String) async throws -> [String?] {
        let row = try #require(try await database.query(
            "SELECT user_id, fcm_token, push_to_start_token, timezone, locale FROM devices WHERE device_id = $1", [device]).first)
        return try (0..<5).map { try row.decode($0, as: String?.self) }
    }

    /// A token signed with the API's secret over exactly these claims.
    static func signed(_ claims: String) throws -> String {
        try JWTSigner.hs256(secret: Array(secret.utf8)).sign(headerJSON: Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8), claimsJSON: Array(claims.utf8))
    }
}

@Suite("Attacks on countdown-api, second round", .serialized)
struct SecondRoundAttackTests {
    @Test func aTakeoverKeepsNothingTheRequestDidNotSend() async throws {
        try await AttackTests.withAPI { api, database in
            let victim = try AttackTests.hourToken("u1")
            let attacker = try AttackTests.hourToken("u2")
            let device = Sample.deviceID()
            let victimsPushToStart = Sample.hexToken()
            #expect(try await AttackTests.post(api, [
                "token": Sample.fcmToken(), "platform": "ios", "deviceId": device, "liveActivityPushToStartToken": victimsPushToStart,
                "timezone": "Europe/Istanbul", "locale": "tr",
            ], bearer: victim).status == 200)
            // The attacker sends only an FCM token: the victim's push-to-start token, time zone and locale go.
            let attackersFCM = Sample.fcmToken()
            #expect(try await AttackTests.post(api, ["token": attackersFCM, "platform": "ios", "deviceId": device], bearer: attacker).status == 200)
            #expect(try await AttackTests.deviceRow(database, device) == ["u2", attackersFCM, nil, nil, nil])
            #expect(api.stderr.contains("device taken over"), "a takeover is logged")

            // The reverse: only a push-to-start token; the victim's FCM token goes.
            let second = Sample.deviceID()
            #expect(try await AttackTests.post(api, [
                "token": Sample.fcmToken(), "platform": "ios", "deviceId": second, "timezone": "Europe/Istanbul", "locale": "en",
            ], bearer: victim).status == 200)
            let attackersPushToStart = Sample.hexToken()
            #expect(try await AttackTests.post(api, [
                "platform": "ios", "deviceId": second, "liveActivityPushToStartToken": attackersPushToStart,
            ], bearer: attacker).status == 200)
            #expect(try await AttackTests.deviceRow(database, second) == ["u2", nil, attackersPushToStart, nil, nil])

            // The owner's own updates still keep what they do not send.
            let ownFCM = Sample.fcmToken()
            #expect(try await AttackTests.post(api, ["token": ownFCM, "platform": "ios", "deviceId": second, "locale": "tr"], bearer: attacker).status == 200)
            #expect(try await AttackTests.deviceRow(database, second) == ["u2", ownFCM, attackersPushToStart, nil, "tr"])
        }
    }

    @Test func someoneElsesDeviceAndAnUnknownOneAnswerAlike() async throws {
        try await AttackTests.withAPI { api, database in
            try await database.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'Title', now() + interval '1 hour')")
            let device = Sample.deviceID()
            #expect(try await AttackTests.register(api, device: device, bearer: try AttackTests.hourToken("u1")).status == 200)
            let prober = try AttackTests.hourToken("u2")
            var answers: [(Int, String?)] = []
            for probed in [device, Sample.deviceID()] {
                let deleted = try await api.fetch("DELETE", "/notifications/live-activity-sessions/s1/\(probed)", headers: ["Authorization": "Bearer \(prober)"])
                let session = try await api.fetch("POST", "/notifications/live-activity-sessions", body: try JSONSerialization.data(withJSONObject: [
                    "streamId": "s1", "deviceId": probed, "liveActivityToken": Sample.hexToken(),
                ]), headers: AttackTests.json.merging(["Authorization": "Bearer \(prober)"]) { _, new in new })
                answers += [(deleted.status, AttackTests.errorCode(deleted.body)), (session.status, AttackTests.errorCode(session.body))]
            }
            #expect(answers.allSatisfy { $0.0 == 404 && $0.1 == "device_not_found" }, "\(answers)")
            // An anonymous write for a linked device stays 401 (device ids are random UUIDs the app makes).
            #expect(try await AttackTests.register(api, device: device).status == 401)
        }
    }

    @Test func signedTokensWithAbsurdNumbersOrRepeatedKeysAreRefusedAndNothingCrashes() async throws {
        try await AttackTests.withAPI(["API_JWT_MAX_LIFETIME_SECONDS": "3600"]) { api, _ in
            let now = Int(Date().timeIntervalSince1970)
            let claims = [
                #"{"sub":"u1","exp":\#(now + 60),"nbf":1e300}"#, #"{"sub":"u1","exp":1e300}"#, #"{"sub":"u1","exp":\#(now + 60),"iat":-1e300}"#,
                #"{"sub":"u1\u0000","exp":\#(now + 60)}"#, #"{"sub":"u2","sub":"u1","exp":\#(now + 60)}"#,
            ]
            for claim in claims {
                let reply = try await AttackTests.register(api, device: Sample.deviceID(), bearer: try AttackTests.signed(claim))
                #expect(reply.status == 401, "\(claim)")
                #expect(AttackTests.errorCode(reply.body) == "unauthorized")
            }
            #expect(try await api.fetch("GET", "/healthz").status == 200, "the process is still up")
            #expect(try await AttackTests.register(api, device: Sample.deviceID(), bearer: try AttackTests.signed(#"{"sub":"u1","exp":\#(now + 60)}"#)).status == 200)
        }
    }

    @Test func tokensLivingLongerThanADayAreRefusedByDefault() async throws {
        try await AttackTests.withAPI { api, _ in
            let now = Date().timeIntervalSince1970
            let day = try AttackTests.token(AttackTests.Claims(sub: "u1", exp: now + 23 * 3600))
            let week = try AttackTests.token(AttackTests.Claims(sub: "u1", exp: now + 7 * 86400))
            #expect(try await AttackTests.register(api, device: Sample.deviceID(), bearer: day).status == 200)
            #expect(try await AttackTests.register(api, device: Sample.deviceID(), bearer: week).status == 401)
        }
        try await AttackTests.withAPI(["API_JWT_MAX_LIFETIME_SECONDS": "0"]) { api, _ in
            let week = try AttackTests.token(AttackTests.Claims(sub: "u1", exp: Date().timeIntervalSince1970 + 7 * 86400))
            #expect(try await AttackTests.register(api, device: Sample.deviceID(), bearer: week).status == 200, "0 turns the limit off")
        }
    }

    @Test func theSoftDescriptorLimitIsRaisedAndTheCapFitsUnderIt() async throws {
        try await DatabaseFixture.with { fixture in
            let environment = ["DATABASE_URL": fixture.database.url, "API_JWT_SECRET": AttackTests.secret]
            let api = try APIProcess(environment: environment, openFiles: (soft: 256, hard: 1000))
            #expect(try await api.fetch("GET", "/healthz").status == 200)
            let line = try #require(api.stderr.split(separator: "\n").first { $0.contains("connection cap lowered") })
            #expect(line.contains("\"descriptorLimit\":1000"), "soft raised to the hard limit: \(line)")
            #expect(line.contains("\"connections\":\(1000 - 16 - DescriptorBudget.reserve)"), "\(line)")
            #expect(api.stop() == 0)
        }
    }

    @Test func pastTheConnectionBudgetRequestsGet503AndTheDatabaseKeepsItsDescriptors() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let environment = ["DATABASE_URL": fixture.database.url, "API_JWT_SECRET": AttackTests.secret, "API_DATABASE_CONNECTIONS": "4"]
            // 300 descriptors: 300 - 4 - reserve connections, 503 past nine in ten of them.
            let api = try APIProcess(environment: environment, openFiles: (soft: 300, hard: 300))
            let budget = try #require(DescriptorBudget(descriptorLimit: 300, configured: 4096, pool: 4))
            let held = try (0..<budget.overloadThreshold).map { _ in try RawSocket(port: api.port) }
            try await waitUntil(timeout: .seconds(10), "the overload answer") {
                let reply = try await api.fetch("GET", "/readyz")
                return reply.status == 503 && reply.headers["retry-after"] != nil && AttackTests.errorCode(reply.body) == "unavailable"
            }
            for socket in held { socket.close() }
            try await waitUntil(timeout: .seconds(10), "served again") { try await api.fetch("GET", "/readyz").status == 200 }
            #expect(try await AttackTests.register(api, device: Sample.deviceID(), bearer: try AttackTests.hourToken("u1")).status == 200)
            #expect(!api.stderr.contains("Too many open files"))
            #expect(api.stop() == 0)
        }
    }

    @Test func aSecondForwardedForLineDoesNotBypassTheAddressLimit() async throws {
        try await AttackTests.withAPI(["API_WRITES_PER_MINUTE_PER_IP": "3", "API_TRUSTED_PROXIES": "127.0.0.1"]) { api, _ in
            let port = api.port
            let statuses = try await offThePool {
                try (0..<6).map { index -> Int? in
                    // The client's own line first, then the line the proxy appended with the real address.
                    let body = #"{"token":"\#(Sample.fcmToken())","platform":"ios","deviceId":"\#(Sample.deviceID())"}"#
                    let socket = try RawSocket(port: port)
                    try socket.send("POST /notifications/device-token HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\n"
                        + "X-Forwarded-For: 10.77.0.\(index)\r\nX-Forwarded-For: 198.51.100.7\r\nConnection: close\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
                    return socket.readStatus()
                }
            }
            #expect(statuses == [200, 200, 200, 429, 429, 429], "\(statuses)")
        }
    }
}
