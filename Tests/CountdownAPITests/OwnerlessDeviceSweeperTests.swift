import CountdownAPI
import Foundation
import Telemetry
import Testing
import TestSupport

@Suite("Ownerless devices expire")
struct OwnerlessDeviceSweeperTests {
    @Test func onlyDevicesThatNeverHadAUserAndAreOldEnoughAreDeleted() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1", "u2"])
            let devices = ["old-anonymous", "fresh-anonymous", "old-owned", "old-unlinked", "old-user-deleted"].map { ($0, Sample.deviceID()) }
            let id = Dictionary(uniqueKeysWithValues: devices)
            for (name, device) in devices {
                let owner: String? = name.hasPrefix("old-anonymous") || name.hasPrefix("fresh") ? nil : name == "old-user-deleted" ? "u2" : "u1"
                try await fixture.sql("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ($1, $2, 'ios', 'f')", [device, owner])
            }
            try await fixture.sql("UPDATE devices SET user_id = NULL WHERE device_id = $1", [id["old-unlinked"]!])
            try await fixture.sql("DELETE FROM users WHERE id = 'u2'")  // ON DELETE SET NULL unlinks its device
            try await fixture.sql("UPDATE devices SET updated_at = now() - interval '31 days' WHERE device_id <> $1", [id["fresh-anonymous"]!])

            let metrics = APIMetrics(registry: MetricsRegistry())
            let sweeper = OwnerlessDeviceSweeper(database: fixture.client, ttlHours: 720, metrics: metrics, logger: Logger(level: .error))
            #expect(try await sweeper.sweepOnce() == 1)
            let left = Set(try await fixture.rows("SELECT device_id FROM devices").map { try $0.decode(0, as: String.self) })
            #expect(left == Set(devices.filter { $0.0 != "old-anonymous" }.map(\.1)))
            #expect(try await sweeper.sweepOnce() == 0, "idempotent")
            #expect(metrics.registry.render().contains("countdown_api_ownerless_devices_expired_total 1"))
        }
    }

    @Test func aLoginBeforeTheCutOffKeepsTheDevice() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["u1"])
            let device = Sample.deviceID()
            #expect(await fixture.api.send("POST", "/notifications/device-token", json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": device]).succeeded)
            #expect(await fixture.api.send("POST", "/notifications/device-token", json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": device],
                                           bearer: try fixture.api.token("u1")).succeeded)
            try await fixture.sql("UPDATE devices SET updated_at = now() - interval '400 days'")
            let sweeper = OwnerlessDeviceSweeper(database: fixture.client, ttlHours: 1, metrics: APIMetrics(registry: MetricsRegistry()), logger: Logger(level: .error))
            #expect(try await sweeper.sweepOnce() == 0)
            #expect(try await fixture.count("SELECT count(*) FROM devices") == 1)
            let periodic = OwnerlessDeviceSweeper(database: fixture.client, ttlHours: 1, metrics: APIMetrics(registry: MetricsRegistry()),
                                                  logger: Logger(level: .error), interval: .seconds(7))
            #expect(await periodic.runOnce() == .seconds(7), "a round sweeps, then waits its interval")
        }
    }
}
