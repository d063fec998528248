import Foundation
import Redis
import Testing
import TestSupport

/// The failover scenarios' Redis set on its own: the Sentinels agree at start, a killed primary is replaced by the
/// replica, and a client configured from `workerEnvironment` follows.
@Suite struct ThrowawaySentinelSetTests {
    @Test func aKilledPrimaryIsReplacedByTheReplicaAndClientsFollow() async throws {
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("sentinel-set"))
        let set = try await ThrowawaySentinelSet.start(directory: directory, masterName: TestEnvironment.uniqueName("set"))
        defer { set.stop() }
        #expect(await set.primaryAccordingToSentinels() == set.primaryPort)
        #expect(await set.role(set.primaryPort) == "master")
        #expect(await set.role(set.replicaPort) == "slave")
        #expect(set.workerEnvironment["REDIS_SENTINELS"]?.split(separator: ",").count == 3)

        let client = RedisClient(configuration: try RedisConfiguration(url: set.harnessURL, environment: set.workerEnvironment), poolSize: 1)
        defer { client.close() }
        try await client.command("SET", "before", "1")
        try await set.kill(set.primaryPort)
        #expect(await set.role(set.primaryPort) == nil)
        let took = try await set.waitForPrimary(set.replicaPort)
        #expect(took < 30)
        try await waitUntil(timeout: .seconds(20), "the client to write to the new primary") {
            (try? await client.command("SET", "after", "1", retry: .onceOnBrokenConnection)) != nil
        }
        #expect(try await set.command(on: set.replicaPort, ["GET", "before"]).string == "1")

        set.stop()
        #expect(await set.role(set.replicaPort) == nil)
    }
}
