@testable import CountdownConsole
@testable import CountdownMaintenance
import Foundation
import PushGuard
import Redis
import Testing
import TestSupport

/// SPEC 12.4: while the fleet holds starts after the database went back in time, the fleet page says so.
@Suite struct RestoreGuardLineTests {
    @Test func theFleetPageShowsATrippedRestoreGuard() async throws {
        let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
        defer { redis.close() }
        let namespace = TestEnvironment.uniqueName("console")
        let probe = RedisFleetProbe(redis: redis, namespace: namespace, guardRule: TokenGuard(minRefusals: 20, ratio: 0.2))
        #expect(try await probe.restoreGuard() == nil)
        _ = try await redis.command("SET", RedisArgument("{\(namespace)}:fleet:restore-guard"), "found by worker w1: PostgreSQL is 300 s behind")
        let record = try await probe.restoreGuard()
        #expect(record == "found by worker w1: PostgreSQL is 300 s behind")

        let stats = SystemStats(delayed: 0, dueNow: 0, leased: 0, dead: 0, oldestLatenessSeconds: 0, jobsByKind: [:], outboxBacklog: 0,
                                outboxOldestAgeSeconds: 0, recentStartResults: [:], remindersSentLastHour: 0, streamsByStatus: [:])
        let page = ConsolePages.Fleet(stats: stats, quarantined: 0, paused: [], workers: [], tokenGuard: nil, restoreGuard: record)
        let html = String(decoding: ConsoleRender(user: nil).fleet(page).body, as: UTF8.self)
        #expect(html.contains("Restore guard: <span class=\"warn\">tripped") && html.contains("300 s behind"), "\(html)")
        var quiet = page
        quiet.restoreGuard = nil
        #expect(!String(decoding: ConsoleRender(user: nil).fleet(quiet).body, as: UTF8.self).contains("Restore guard"))
        try await LedgerWatermark(redis: redis, namespace: namespace).clear()
    }
}
