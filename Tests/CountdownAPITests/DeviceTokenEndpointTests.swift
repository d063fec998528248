import CountdownAPI
import Foundation
import Testing

@Suite("POST /notifications/device-token against PostgreSQL")
struct DeviceTokenEndpointTests {
    struct DeviceRow: Equatable {
        var user: String?
        var platform: String
        var fcm: String?
        var pushToStart: String?
        var timezone: String?
        var locale: String?
    }

    func device(_ fixture: DatabaseFixture, _ id: String) async throws -> DeviceRow? {
        try await fixture.rows("SELECT * FROM devices WHERE device_id = $1", [id]).first.map {
            DeviceRow(
                user: try $0.decode("user_id"), platform: try $0.decode("platform"), fcm: try $0.decode("fcm_token"),
                pushToStart: try $0.decode("push_to_start_token"), timezone: try $0.decode("timezone"), locale: try $0.decode("locale"))
        }
    }

    func register(_ fixture: DatabaseFixture, _ body: [String: Any], as user: String? = nil) async throws -> TestAPI.Reply {
        await fixture.api.send("POST", "/notifications/device-token", json: body, bearer: try user.map { try fixture.api.token($0) })
    }

    @Test func authenticatedRegistrationWritesTheRowTheWorkerReads() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let id = Sample.deviceID()
            let fcm = Sample.fcmToken()
            let pushToStart = Sample.hexToken(bytes: 80).uppercased()
            let reply = try await register(fixture, [
                "token": fcm, "platform": "ios", "deviceId": id, "timezone": "Europe/Istanbul", "locale": "tr-TR",
                "liveActivityPushToStartToken": pushToStart,
            ], as: "u1")
            #expect(reply.succeeded)
            #expect(String(decoding: reply.body, as: UTF8.self) == #"{"success":true}"#)
            let row = try await device(fixture, id)
            #expect(row == DeviceRow(user: "u1", platform: "ios", fcm: fcm, pushToStart: pushToStart.lowercased(), timezone: "Europe/Istanbul", locale: "tr-TR"))
            let outbox = try await fixture.outbox("device")
            #expect(outbox.count == 1)
            #expect(outbox.first?.user == "u1")
            #expect(outbox.first?.device == id)
        }
    }

    @Test func repeatingARegistrationChangesNothing() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let body: [String: Any] = ["token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID(),
                                       "liveActivityPushToStartToken": Sample.hexToken()]
            #expect(try await register(fixture, body, as: "u1").succeeded)
            let firstUpdate = try await fixture.rows("SELECT updated_at::text AS t FROM devices").first?.decode("t", as: String.self)
            for _ in 0..<3 { #expect(try await register(fixture, body, as: "u1").succeeded) }
            #expect(try await fixture.count("SELECT count(*) FROM devices") == 1)
            #expect(try await fixture.outbox("device").count == 1)
            let lastUpdate = try await fixture.rows("SELECT updated_at::text AS t FROM devices").first?.decode("t", as: String.self)
            #expect(firstUpdate == lastUpdate)
        }
    }

    @Test func anonymousRegistrationMayNotChangeALinkedDevice() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let id = Sample.deviceID()
            let fcm = Sample.fcmToken()
            var body: [String: Any] = ["token": fcm, "platform": "ios", "deviceId": id]
            #expect(try await register(fixture, body).succeeded)
            #expect(try await device(fixture, id)?.user == nil)
            #expect(try await fixture.outbox("device").isEmpty, "a device without a user concerns no stream")
            body["token"] = Sample.fcmToken()
            #expect(try await register(fixture, body).succeeded, "a device with no user may be updated anonymously")

            #expect(try await register(fixture, body, as: "u1").succeeded)
            #expect(try await device(fixture, id)?.user == "u1")
            #expect(try await fixture.outbox("device").count == 1, "login links the device: backfill")
            let linked = try await device(fixture, id)

            // The attack: an anonymous caller replaces the tokens of a linked device.
            let attacker = ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id,
                            "liveActivityPushToStartToken": Sample.hexToken(), "locale": "en"]
            let refused = try await register(fixture, attacker)
            #expect(refused.status == 401)
            #expect(refused.errorCode == "unauthorized")
            #expect(refused.headers["WWW-Authenticate"] == "Bearer")
            #expect(try await device(fixture, id) == linked, "nothing written")
            #expect(try await fixture.outbox("device").count == 1, "no backfill to the attacker's tokens")

            let pushToStartOnly = try await register(fixture, ["platform": "ios", "deviceId": id, "liveActivityPushToStartToken": Sample.hexToken()])
            #expect(pushToStartOnly.status == 401)
            #expect(try await device(fixture, id) == linked)
            #expect(fixture.api.metric("countdown_api_device_writes_refused_total") == 2)
        }
    }

    @Test func aLoginOnASharedPhoneTakesTheDeviceOverAndEndsThePreviousUsersSessions() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"], stream: "s1", creator: "u1")
            try await fixture.sql("INSERT INTO streams (id, title, planned_start_at) VALUES ('s2', 'Other', now() + interval '2 hours')")
            try await fixture.sql("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s3', 'Over', now() - interval '1 hour', 'cancelled')")
            let id = Sample.deviceID()
            let other = Sample.deviceID()
            #expect(try await register(fixture, ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id], as: "u1").succeeded)
            #expect(try await register(fixture, ["token": Sample.fcmToken(), "platform": "ios", "deviceId": other], as: "u1").succeeded)
            var tokens: [String: String] = [:]
            for (stream, device) in [("s1", id), ("s2", id), ("s1", other)] {
                let token = Sample.hexToken()
                tokens[stream + device] = token
                let reply = await fixture.api.send("POST", "/notifications/live-activity-sessions", json: [
                    "streamId": stream, "deviceId": device, "liveActivityToken": token,
                ], bearer: try fixture.api.token("u1"))
                #expect(reply.succeeded)
            }
            // A session of an ended stream is left to that stream's own end push.
            try await fixture.sql("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s3', $1, 'u1', 'ee')", [id])
            let reply = try await register(fixture, ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id], as: "u2")
            #expect(reply.succeeded)
            #expect(try await device(fixture, id)?.user == "u2")
            #expect(fixture.api.metric("countdown_api_device_takeovers_total") == 1)
            #expect(fixture.api.metric("countdown_api_takeover_sessions_ended_total") == 2)
            #expect(try await fixture.outbox("device").last?.user == "u2", "the new user's streams are backfilled")
            // u1's sessions of streams still scheduled left live_activity_sessions; their runtime tokens wait for the worker's end push.
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions WHERE device_id = $1 AND stream_id <> 's3'", [id]) == 0)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions WHERE device_id = $1 AND stream_id = 's3'", [id]) == 1)
            let retired = try await fixture.rows(
                "SELECT stream_id, live_activity_token, user_id, reason FROM countdown_retired_sessions WHERE device_id = $1 ORDER BY stream_id", [id]
            ).map { [try $0.decode("stream_id", as: String.self), try $0.decode("live_activity_token", as: String.self),
                     try $0.decode("user_id", as: String.self), try $0.decode("reason", as: String.self)] }
            #expect(retired == [["s1", tokens["s1" + id]!, "u1", "takeover"], ["s2", tokens["s2" + id]!, "u1", "takeover"]])
            #expect(try await fixture.outbox("retired").count == 2, "the worker is told in the same transaction")
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions WHERE device_id = $1", [other]) == 1,
                    "u1's other phone keeps its session")
            #expect(fixture.api.logs.lines.contains { $0.contains("device taken over") && $0.contains("\"sessionsEnded\":2") })
            // u1 can no longer register or remove sessions on the phone; u2 (its owner now) can register its own.
            let refused = await fixture.api.send("POST", "/notifications/live-activity-sessions", json: [
                "streamId": "s1", "deviceId": id, "liveActivityToken": Sample.hexToken(),
            ], bearer: try fixture.api.token("u1"))
            #expect(refused.status == 404, "not yours is answered as unknown")
            #expect(await fixture.api.send("DELETE", "/notifications/live-activity-sessions/s1/\(id)", bearer: try fixture.api.token("u1")).status == 404)
            let own = await fixture.api.send("POST", "/notifications/live-activity-sessions", json: [
                "streamId": "s2", "deviceId": id, "liveActivityToken": Sample.hexToken(),
            ], bearer: try fixture.api.token("u2"))
            #expect(own.succeeded)
            #expect(try await fixture.count("SELECT count(*) FROM countdown_retired_sessions WHERE device_id = $1", [id]) == 2,
                    "the new user's session of the same stream does not touch the retired one")
            // The same user again is no takeover.
            #expect(try await register(fixture, ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id], as: "u2").succeeded)
            #expect(fixture.api.metric("countdown_api_device_takeovers_total") == 1)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions WHERE device_id = $1 AND stream_id = 's2'", [id]) == 1)
        }
    }

    @Test func theLatestAuthenticatedRegistrationWins() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"])
            let id = Sample.deviceID()
            let body: [String: Any] = ["token": Sample.fcmToken(), "platform": "android", "deviceId": id]
            #expect(try await register(fixture, body, as: "u1").succeeded)
            #expect(try await register(fixture, body, as: "u2").succeeded)
            #expect(try await device(fixture, id)?.user == "u2")
            #expect(try await fixture.outbox("device").map(\.user) == ["u1", "u2"])
        }
    }

    @Test func anUnknownUserLinksNothing() async throws {
        try await DatabaseFixture.with { fixture in
            let id = Sample.deviceID()
            let reply = try await register(fixture, ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id], as: "ghost")
            #expect(reply.status == 403)
            #expect(reply.errorCode == "unknown_user")
            #expect(try await fixture.count("SELECT count(*) FROM devices") == 0)
            #expect(try await fixture.count("SELECT count(*) FROM users") == 0)
        }
    }

    @Test func pushToStartOnlyUpdateChangesTheTokenOfAKnownDevice() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let id = Sample.deviceID()
            let newToken = Sample.hexToken(bytes: 64)
            let update: [String: Any] = ["platform": "ios", "deviceId": id, "liveActivityPushToStartToken": newToken]
            let unknown = try await register(fixture, update, as: "u1")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "device_not_found")
            #expect(try await fixture.count("SELECT count(*) FROM devices") == 0)

            let fcm = Sample.fcmToken()
            #expect(try await register(fixture, ["token": fcm, "platform": "ios", "deviceId": id, "timezone": "Europe/Berlin",
                                                 "liveActivityPushToStartToken": Sample.hexToken()], as: "u1").succeeded)
            #expect(try await register(fixture, update, as: "u1").succeeded)
            let row = try await device(fixture, id)
            #expect(row == DeviceRow(user: "u1", platform: "ios", fcm: fcm, pushToStart: newToken, timezone: "Europe/Berlin", locale: nil))
            #expect(try await fixture.outbox("device").count == 2)
        }
    }

    @Test func missingOptionalFieldsKeepStoredValuesAndOtherPlatformsDropPushToStart() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let id = Sample.deviceID()
            let fcm = Sample.fcmToken()
            let pushToStart = Sample.hexToken()
            #expect(try await register(fixture, ["token": fcm, "platform": "ios", "deviceId": id, "locale": "en",
                                                 "liveActivityPushToStartToken": pushToStart], as: "u1").succeeded)
            #expect(try await register(fixture, ["token": fcm, "platform": "ios", "deviceId": id], as: "u1").succeeded)
            #expect(try await device(fixture, id) == DeviceRow(user: "u1", platform: "ios", fcm: fcm, pushToStart: pushToStart, locale: "en"))
            #expect(try await register(fixture, ["token": fcm, "platform": "web", "deviceId": id], as: "u1").succeeded)
            #expect(try await device(fixture, id) == DeviceRow(user: "u1", platform: "web", fcm: fcm, pushToStart: nil, locale: "en"))
        }
    }
}
