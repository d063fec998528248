import CountdownAPI
import Foundation
import Postgres
import Testing

/// The rule end to end, through the API. The store's own decisions: CountdownStoreTests/DeviceOwnershipQueriesTests.
@Suite("Device ownership is decided in the write")
struct DeviceOwnershipTests {
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
