@testable import CountdownAPI
import Foundation
import Postgres
import Testing

@Suite("Device ownership is decided in the write")
struct DeviceOwnershipTests {
    static func item(_ device: String, user: String?, fcm: String = Sample.fcmToken()) -> DeviceUpsertBatcher.Item {
        DeviceUpsertBatcher.Item(registration: DeviceRegistration(deviceID: device, platform: "ios", fcmToken: fcm), userID: user)
    }

    @Test func oneBatchGivesEachRegistrationItsOwnOutcomeAndCommitsTheRest() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"], stream: "s1", creator: "u1")
            try await fixture.sql("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
                    ('d-linked', 'u1', 'ios', 'fcm-linked'), ('d-free', NULL, 'ios', 'fcm-free'), ('d-shared', 'u1', 'ios', 'fcm-shared')
                """)
            try await fixture.sql("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s1', 'd-shared', 'u1', 'aa')")
            let items = [
                Self.item("d-free", user: nil, fcm: "fcm-free-2"), Self.item("d-linked", user: nil, fcm: "fcm-attacker"),
                Self.item("d-new", user: nil, fcm: "fcm-new"), Self.item("d-shared", user: "u2", fcm: "fcm-u2"),
            ].sorted { $0.registration.deviceID < $1.registration.deviceID }
            let outcomes = try await fixture.client.withConnection { try DeviceOwnership.write(items, .upsert, on: $0) }
            let byDevice = Dictionary(uniqueKeysWithValues: zip(items.map(\.registration.deviceID), outcomes))
            #expect(byDevice["d-free"] == .written)
            #expect(byDevice["d-linked"] == .refused)
            #expect(byDevice["d-new"] == .written)
            #expect(byDevice["d-shared"] == .takenOver(previousUser: "u1", sessionsEnded: 1))
            #expect(try await fixture.count("SELECT count(*) FROM live_activity_sessions WHERE device_id = 'd-shared'") == 0)
            #expect(try await fixture.count(
                "SELECT count(*) FROM countdown_retired_sessions WHERE device_id = 'd-shared' AND user_id = 'u1' AND live_activity_token = 'aa'") == 1)
            let rows = try await fixture.rows("SELECT device_id, user_id, fcm_token FROM devices ORDER BY device_id").map {
                [try $0.decode("device_id", as: String.self), try $0.decode("user_id", as: String?.self) ?? "-", try $0.decode("fcm_token", as: String.self)]
            }
            #expect(rows == [
                ["d-free", "-", "fcm-free-2"], ["d-linked", "u1", "fcm-linked"], ["d-new", "-", "fcm-new"], ["d-shared", "u2", "fcm-u2"],
            ])
        }
    }

    @Test func aPushToStartUpdateFollowsTheSameRule() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            try await fixture.sql("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d1', 'u1', 'ios', 'fcm')")
            func update(_ device: String, user: String?) async throws -> DeviceUpsertOutcome? {
                let item = DeviceUpsertBatcher.Item(
                    registration: DeviceRegistration(deviceID: device, platform: "ios", fcmToken: nil, pushToStartToken: "ab"), userID: user)
                return try await fixture.client.withConnection { try DeviceOwnership.write([item], .pushToStartUpdate, on: $0) }[0]
            }
            #expect(try await update("d1", user: nil) == .refused)
            #expect(try await fixture.count("SELECT count(*) FROM devices WHERE push_to_start_token IS NOT NULL") == 0)
            #expect(try await update("d1", user: "u1") == .written)
            #expect(try await update("missing", user: "u1") == nil)
        }
    }

    static func body(_ device: String, _ fcm: String) -> [String: Any] { ["token": fcm, "platform": "ios", "deviceId": device] }

    @Test func racingAnonymousWritesNeverReplaceTheTokensOfALinkedDevice() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"])
            let device = Sample.deviceID()
            let owners = Sample.fcmToken("owner-u1")
            let api = fixture.api
            #expect(await api.send("POST", "/notifications/device-token", json: Self.body(device, owners), bearer: try api.token("u1")).succeeded)
            let loginToken = Sample.fcmToken("login-u2")
            let bearer = try api.token("u2")
            let statuses = await withTaskGroup(of: (Bool, Int).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        (false, await api.send("POST", "/notifications/device-token", json: Self.body(device, Sample.fcmToken("anon\(index)"))).status)
                    }
                }
                group.addTask { (true, await api.send("POST", "/notifications/device-token", json: Self.body(device, loginToken), bearer: bearer).status) }
                var statuses: [(Bool, Int)] = []
                for await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.filter { !$0.0 }.allSatisfy { $0.1 == 401 }, "every anonymous write was refused")
            #expect(statuses.filter(\.0).map(\.1) == [200])
            let row = try await fixture.rows("SELECT user_id, fcm_token FROM devices WHERE device_id = $1", [device]).first
            #expect(try row?.decode("user_id", as: String.self) == "u2")
            #expect(try row?.decode("fcm_token", as: String.self) == loginToken)
        }
    }
}
