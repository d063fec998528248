import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Testing
import TestSupport

/// `countdown-admin pause` in the middle of a start burst, then `resume`: nothing lost, nothing sent twice.
@Suite(.serialized) struct PauseTests {
    @Test func pausingStartsMidBurstLosesAndRepeatsNothing() async throws {
        let streams = 300
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "60", "START_BATCH_SIZE": "8"])
        // The starts come due over 20 s of the database's clock, so the pause (a process start away) lands inside
        // the burst however fast or loaded the machine is (with every start due at once, fast workers could finish
        // the burst before the admin process had started, and nothing would be left to hold).
        try await system.burst(streams, startsIn: 63, spread: 20)
        // Slow answers keep jobs running when the pause lands.
        try await system.fault(["latencyMs": 150])
        try system.startWorker()
        try system.startWorker()
        try await system.waitForPushes(timeout: .seconds(30), "the burst to begin") { $0.events("start").count >= 20 }
        let paused = try await system.admin(["pause", "--kind", "start", "--reason", "chaos", "--yes"])
        #expect(paused.status == 0, "\(paused.output)")
        // Jobs already running finish; after that nothing more starts (observing an absence takes a while).
        try await waitUntil(timeout: .seconds(20), "the running start jobs finished") {
            let stats = try await system.admin(["stats", "--json"])
            return stats.output.contains("\"leased\" : 0")
        }
        let before = try await system.pushes().events("start").count
        // The workers' claims went on and held every due start job aside.
        try await waitUntil(timeout: .seconds(10), "every due start job held aside") {
            let stats = try await system.queueStats()
            return stats.leased == 0 && stats.dueNow > 0 && stats.paused == stats.dueNow
        }
        let during = try await system.pushes().events("start").count
        #expect(during == before, "no start is claimed while paused (\(before) → \(during))")
        #expect(during < streams, "the pause came before the burst ended")
        let stats = try await system.admin(["stats"])
        #expect(stats.output.contains("paused:   start since"), "\(stats.output)")
        let resumed = try await system.admin(["resume"])
        #expect(resumed.status == 0, "\(resumed.output)")
        let pushes = try await system.waitForPushes(timeout: .seconds(60), "every stream's start") { pushes in
            Set(pushes.events("start").map(\.fcmToken)).count == streams
        }
        #expect(pushes.events("start").count == streams, "no start sent twice")
        await system.stop()
    }
}
