import Foundation
import Testing
import TestSupport

/// The harness' own connections across what the store chaos scenarios do to the servers: an immediate stop of the
/// system's own PostgreSQL and a SIGKILL of its own Redis (the pooled connections reconnect at their next use, so
/// scenarios 2 and 4 need no step of their own), and a Redis reached only through Sentinels.
@Suite(.serialized) struct SystemServerLossTests {
    @Test func theHarnessConnectionsSurviveBothServersGoingAway() async throws {
        var options = SystemOptions()
        options.redis = .own
        options.postgres = .own
        options.name = "h5"
        let system = try await CountdownSystem(options)
        do {
            let redis = try #require(system.ownRedis)
            let postgres = try #require(system.ownPostgres)
            #expect(try await system.outboxBacklog() == 0)
            #expect(try await system.queueStats().claimableNow == 0)

            _ = try await offThePool { postgres.stopImmediately() }
            try await offThePool { try postgres.start() }
            try await redis.crash()
            try await redis.startInBackground()

            // The first calls after the restarts succeed, on the pooled connections the servers dropped.
            #expect(try await system.outboxBacklog() == 0)
            #expect(try await system.queueStats().claimableNow == 0)
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }

    @Test func theHarnessFindsASentinelSetsPrimaryAsTheWorkersDo() async throws {
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("h6-redis"))
        let set = try await ThrowawaySentinelSet.start(directory: directory, masterName: TestEnvironment.uniqueName("h6"))
        defer { set.stop() }
        var options = SystemOptions()
        options.redis = .target(set)
        options.name = "h6"
        let system = try await CountdownSystem(options)
        #expect(system.workerEnvironment["REDIS_SENTINELS"] == set.workerEnvironment["REDIS_SENTINELS"])
        let counts = try await system.queueStats()
        #expect(counts.claimableNow == 0 && counts.leased == 0)
        await system.stop()
    }
}
