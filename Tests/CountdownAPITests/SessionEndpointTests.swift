import CountdownAPI
import Foundation
import Testing

@Suite("Live Activity session endpoints against PostgreSQL")
struct SessionEndpointTests {
    /// Users u1 and u2, stream s1 by u1, and u1's iOS device; returns the device id.
    func prepare(_ fixture: DatabaseFixture) async throws -> String {
        try await fixture.seed(users: ["u1", "u2"], stream: "s1", creator: "u1")
        let id = Sample.deviceID()
        #expect(await fixture.api.send("POST", "/notifications/device-token",
                                       json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": id],
                                       bearer: try fixture.api.token("u1")).succeeded)
        return id
    }

    func post(_ fixture: DatabaseFixture, _ body: [String: Any], as user: String) async throws -> TestAPI.Reply {
        await fixture.api.send("POST", "/notifications/live-activity-sessions", json: body, bearer: try fixture.api.token(user))
    }

    func delete(_ fixture: DatabaseFixture, stream: String, device: String, as user: String?) async throws -> TestAPI.Reply {
        await fixture.api.send("DELETE", "/notifications/live-activity-sessions/\(stream)/\(device)",
                               bearer: try user.map { try fixture.api.token($0) })
    }

    func sessionRow(_ fixture: DatabaseFixture, device: String) async throws -> [String?] {
        try await fixture.rows("SELECT stream_id, user_id, live_activity_token, activity_id FROM live_activity_sessions WHERE device_id = $1", [device])
            .first.map { row in try (0..<4).map { try row.decode($0, as: String?.self) } } ?? []
    }

    @Test func registeringWritesTheSessionAndAnOutboxRow() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            let token = Sample.hexToken(bytes: 40).uppercased()
            let body: [String: Any] = ["streamId": "s1", "deviceId": device, "liveActivityToken": token, "activityId": "A1B2-C3"]
            #expect(try await post(fixture, body, as: "u1").succeeded)
            #expect(try await sessionRow(fixture, device: device) == ["s1", "u1", token.lowercased(), "A1B2-C3"])
            #expect(try await fixture.outbox("session").map(\.stream) == ["s1"])

            #expect(try await post(fixture, body, as: "u1").succeeded)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions") == 1)
            #expect(try await fixture.outbox("session").count == 1, "an identical repeat is not a change")

            let newToken = Sample.hexToken()
            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": newToken], as: "u1").succeeded)
            #expect(try await sessionRow(fixture, device: device) == ["s1", "u1", newToken, nil])
            #expect(try await fixture.outbox("session").count == 2, "a new runtime token is recorded")
        }
    }

    @Test func onlyTheDevicesOwnerMayRegister() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            let body: [String: Any] = ["streamId": "s1", "deviceId": device, "liveActivityToken": Sample.hexToken()]
            let other = try await post(fixture, body, as: "u2")
            #expect(other.status == 404, "someone else's device is answered as an unknown one")
            #expect(other.errorCode == "device_not_found")
            let ghost = try await post(fixture, body, as: "ghost")
            #expect(ghost.status == 403)
            #expect(ghost.errorCode == "unknown_user")

            let anonymous = Sample.deviceID()
            #expect(await fixture.api.send("POST", "/notifications/device-token",
                                           json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": anonymous]).succeeded)
            var unlinked = body
            unlinked["deviceId"] = anonymous
            #expect(try await post(fixture, unlinked, as: "u1").status == 404)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions") == 0)
        }
    }

    /// The policy: any stream (viewers start activities locally too), only the caller's own device.
    @Test func aViewerMayRegisterOnAnyStreamButOnlyForTheirOwnDevice() async throws {
        try await DatabaseFixture.with { fixture in
            let creatorsDevice = try await prepare(fixture)
            let viewersDevice = Sample.deviceID()
            #expect(await fixture.api.send("POST", "/notifications/device-token",
                                           json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": viewersDevice],
                                           bearer: try fixture.api.token("u2")).succeeded)
            let own: [String: Any] = ["streamId": "s1", "deviceId": viewersDevice, "liveActivityToken": Sample.hexToken()]
            #expect(try await post(fixture, own, as: "u2").succeeded, "u2 is no participant of s1 and may still follow it")
            #expect(try await sessionRow(fixture, device: viewersDevice).prefix(2) == ["s1", "u2"])
            let others: [String: Any] = ["streamId": "s1", "deviceId": creatorsDevice, "liveActivityToken": Sample.hexToken()]
            #expect(try await post(fixture, others, as: "u2").status == 404)
            #expect(try await sessionRow(fixture, device: creatorsDevice).isEmpty)
        }
    }

    @Test func unknownStreamOrDeviceIs404() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            let noStream = try await post(fixture, ["streamId": "nope", "deviceId": device, "liveActivityToken": Sample.hexToken()], as: "u1")
            #expect(noStream.status == 404)
            #expect(noStream.errorCode == "stream_not_found")
            let noDevice = try await post(fixture, ["streamId": "s1", "deviceId": Sample.deviceID(), "liveActivityToken": Sample.hexToken()], as: "u1")
            #expect(noDevice.status == 404)
            #expect(noDevice.errorCode == "device_not_found")
        }
    }

    @Test func aSessionForAnEndedStreamIsKeptForItsEndPush() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            try await fixture.sql("UPDATE streams SET status = 'started' WHERE id = 's1'")
            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": Sample.hexToken()], as: "u1").succeeded)
            #expect(try await fixture.outbox("session").count == 1)
        }
    }

    @Test func deletingRemovesOnlyTheOwnersSession() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": Sample.hexToken()], as: "u1").succeeded)

            #expect(try await delete(fixture, stream: "s1", device: device, as: nil).status == 401)
            let other = try await delete(fixture, stream: "s1", device: device, as: "u2")
            let unknown = try await delete(fixture, stream: "s1", device: Sample.deviceID(), as: "u2")
            #expect(other.status == 404)
            #expect(unknown.status == 404)
            #expect(other.errorCode == unknown.errorCode, "someone else's device and an unknown one answer alike")
            #expect(other.body.count == unknown.body.count)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions") == 1)

            let removed = try await delete(fixture, stream: "s1", device: device, as: "u1")
            #expect(removed.status == 204)
            #expect(removed.body.isEmpty)
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions") == 0)
            #expect(try await delete(fixture, stream: "s1", device: device, as: "u1").status == 204, "already gone")
            #expect(try await delete(fixture, stream: "other", device: device, as: "u1").status == 204, "never existed on an own device")
            #expect(try await delete(fixture, stream: "s1", device: "bad%20id", as: "u1").status == 422)
        }
    }

    func activities(_ fixture: DatabaseFixture, device: String) async throws -> [String] {
        try await fixture.rows("""
            SELECT concat_ws(' ', 'newest', coalesce(activity_id, '-'), live_activity_token) AS line FROM live_activity_sessions WHERE device_id = $1
            UNION ALL
            SELECT concat_ws(' ', 'older', activity_id, live_activity_token) FROM countdown_activity_sessions WHERE device_id = $1
            ORDER BY 1
            """, [device]).map { try $0.decode("line", as: String.self) }
    }

    @Test func aSecondActivityKeepsTheFirstAndDeleteTakesAnActivityId() async throws {
        try await DatabaseFixture.with { fixture in
            let device = try await prepare(fixture)
            let (a, b) = (Sample.hexToken(), Sample.hexToken())
            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": a, "activityId": "A"], as: "u1").succeeded)
            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": b, "activityId": "B"], as: "u1").succeeded)
            #expect(try await activities(fixture, device: device) == ["newest B \(b)", "older A \(a)"])

            let path = "/notifications/live-activity-sessions/s1/\(device)"
            for bad in ["", "a%20b", String(repeating: "x", count: 300)] {
                let reply = await fixture.api.send("DELETE", "\(path)?activityId=\(bad)", bearer: try fixture.api.token("u1"))
                #expect(reply.status == 422, "activityId '\(bad.prefix(10))'")
                #expect(reply.errorField == "activityId", "the error names the parameter")
            }
            #expect(await fixture.api.send("DELETE", "\(path)?activityId=A", bearer: try fixture.api.token("u2")).status == 404)
            #expect(await fixture.api.send("DELETE", "\(path)?activityId=B", bearer: try fixture.api.token("u1")).status == 204)
            #expect(try await activities(fixture, device: device) == ["newest A \(a)"], "the older activity takes the removed one's place")

            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": b, "activityId": "B"], as: "u1").succeeded)
            #expect(await fixture.api.send("DELETE", "\(path)?activityId=A", bearer: try fixture.api.token("u1")).status == 204)
            #expect(try await activities(fixture, device: device) == ["newest B \(b)"], "an older activity goes alone")

            #expect(try await post(fixture, ["streamId": "s1", "deviceId": device, "liveActivityToken": a, "activityId": "A"], as: "u1").succeeded)
            #expect(try await delete(fixture, stream: "s1", device: device, as: "u1").status == 204)
            #expect(try await activities(fixture, device: device) == [], "without activityId every activity of the device goes")
        }
    }
}
