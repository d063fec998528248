import CountdownAPI
import Foundation
import Testing

/// SPEC 12.5 in the API: `osVersion` on device registrations (validated, recorded) and
/// `GET /live-stream/{streamId}/live-activity-channel` (authenticated; 404 when broadcast is off or there is no channel).
@Suite struct BroadcastChannelEndpointTests {
    static func api(broadcast: Bool) throws -> (TestAPI, InMemoryAPIStore) {
        let store = InMemoryAPIStore()
        store.state.withLock {
            $0.users = ["u1"]
            $0.channels["s1"] = "dHN0LWNoYW5uZWw="
        }
        var policy = APIPolicy(writesPerMinutePerUser: nil, writesPerMinutePerIP: nil)
        policy.broadcastChannels = broadcast
        return (try TestAPI(store: store, policy: policy), store)
    }

    @Test func theChannelIsAnsweredToAnAuthenticatedCaller() async throws {
        let (api, _) = try Self.api(broadcast: true)
        let reply = await api.send("GET", "/live-stream/s1/live-activity-channel", bearer: try api.token("u1"))
        #expect(reply.status == 200)
        #expect(reply.json["channelId"] as? String == "dHN0LWNoYW5uZWw=" && reply.json["streamId"] as? String == "s1")
        #expect(await api.send("GET", "/live-stream/s1/live-activity-channel").status == 401)
        #expect(await api.send("GET", "/live-stream/s2/live-activity-channel", bearer: try api.token("u1")).status == 404, "no channel")
        #expect(await api.send("POST", "/live-stream/s1/live-activity-channel", bearer: try api.token("u1")).status == 405)
    }

    @Test func broadcastOffAnswers404() async throws {
        let (api, _) = try Self.api(broadcast: false)
        let reply = await api.send("GET", "/live-stream/s1/live-activity-channel", bearer: try api.token("u1"))
        #expect(reply.status == 404)
        #expect(reply.errorMessage.contains("APNS_BROADCAST"))
    }

    @Test func osVersionIsValidatedAndRecorded() async throws {
        let (api, store) = try Self.api(broadcast: true)
        let device = Sample.deviceID()
        let ok = await api.send("POST", "/notifications/device-token", json: [
            "token": Sample.fcmToken(), "platform": "ios", "deviceId": device, "osVersion": "18.2",
        ], bearer: try api.token("u1"))
        #expect(ok.succeeded)
        #expect(store.state.withLock { $0.osVersions[device] } == "18.2")
        for bad in ["eighteen", "18.", "0", "100", "18.1.2.3", "18.a"] {
            let reply = await api.send("POST", "/notifications/device-token", json: [
                "token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID(), "osVersion": bad,
            ], bearer: try api.token("u1"))
            #expect(reply.status == 422 && reply.errorField == "osVersion", "osVersion \"\(bad)\": \(reply.status)")
        }
        let android = await api.send("POST", "/notifications/device-token", json: [
            "token": Sample.fcmToken(), "platform": "android", "deviceId": Sample.deviceID(), "osVersion": "18",
        ], bearer: try api.token("u1"))
        #expect(android.status == 422 && android.errorField == "osVersion")
    }

    @Test func osVersionAndChannelThroughPostgreSQL() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"], stream: "s1", creator: "u1")
            let device = Sample.deviceID()
            let reply = await fixture.api.send("POST", "/notifications/device-token", json: [
                "token": Sample.fcmToken(), "platform": "ios", "deviceId": device, "osVersion": "18.0.1",
            ], bearer: try fixture.api.token("u1"))
            #expect(reply.succeeded)
            let row = try await fixture.rows("SELECT os_version, major FROM countdown_device_os WHERE device_id = $1", [device]).first
            #expect(try row?.decode("os_version", as: String.self) == "18.0.1" && row?.decode("major", as: Int.self) == 18)
            let store = PostgresAPIStore(database: fixture.client)
            #expect(try await store.liveActivityChannel(streamID: "s1") == nil)
            _ = try await fixture.rows("INSERT INTO countdown_broadcast_channels (stream_id, state, channel_id) VALUES ('s1', 'in_use', 'ch-9') RETURNING id")
            #expect(try await store.liveActivityChannel(streamID: "s1") == "ch-9")
        }
    }
}
