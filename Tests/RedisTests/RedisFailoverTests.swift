import Foundation
import Redis
import TestSupport
import Testing

/// Sentinel discovery and failover, and `READONLY` from a demoted primary, against real servers on loopback (a
/// TestSupport `ThrowawaySentinelSet` with one Sentinel, an unreachable one named before it).
@Suite(.serialized) struct RedisFailoverTests {
    @Test func sentinelFindsThePrimaryAndClientsAndSubscribersFollowAForcedFailover() async throws {
        let set = try await Self.startSet()
        let configuration = try RedisConfiguration(url: "redis://sentinel-managed/1", environment: set.workerEnvironment)
        let client = RedisClient(configuration: configuration, poolSize: 2)
        #expect(try await Self.port(of: client) == set.primaryPort)
        try await client.command("SET", "before", "1")
        let subscriber = try RedisSubscriber(configuration: configuration, channels: ["news"])
        try await subscriber.start()

        try await set.command(on: set.sentinelPorts[0], ["SENTINEL", "FAILOVER", RedisArgument(set.masterName)])
        try await set.waitForPrimary(set.replicaPort, timeout: .seconds(20))

        try await waitUntil(timeout: .seconds(20), "the client to write to the new primary") {
            let written = (try? await client.command("SET", "after", "1", retry: .onceOnBrokenConnection)) != nil
            let port = try? await Self.port(of: client)
            return written && port == set.replicaPort
        }
        #expect(try await client.command("GET", "before").string == "1")
        try await waitUntil(timeout: .seconds(20), "the subscriber to hear the new primary") {
            _ = try? await client.command("PUBLISH", "news", "hello")
            let event = try await subscriber.next(timeout: .milliseconds(200))
            return event == .message(channel: Array("news".utf8), payload: Array("hello".utf8))
        }
        client.close()
        _ = try? await offThePool { set.stop() }
    }

    @Test func badSentinelSettingsFailWithOneLine() async throws {
        let set = try await Self.startSet()
        var environment = set.workerEnvironment
        environment["REDIS_SENTINEL_MASTER"] = "no-such-master"
        var configuration = try RedisConfiguration(url: "redis://sentinel-managed", environment: environment)
        configuration.connectTimeout = .seconds(2)
        let client = RedisClient(configuration: configuration, poolSize: 1)
        await #expect { try await client.command("PING") } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .connectionFailed && error.context == "REDIS_SENTINELS" && error.misconfigured == "REDIS_SENTINEL_MASTER"
                && error.message.contains("REDIS_SENTINEL_MASTER") && !"\(error)".contains("\n")
        }
        client.close()

        // Sentinels that cannot be reached may be restarting: not a misconfiguration.
        let (away1, away2) = (RefusingPort(), RefusingPort())
        defer { away1.release(); away2.release() }
        environment["REDIS_SENTINELS"] = "\(away1.address),\(away2.address)"
        environment["REDIS_SENTINEL_MASTER"] = set.masterName
        configuration = try RedisConfiguration(url: "redis://sentinel-managed", environment: environment)
        configuration.connectTimeout = .seconds(2)
        let away = RedisClient(configuration: configuration, poolSize: 1)
        await #expect { try await away.command("PING") } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .connectionFailed && error.context == "REDIS_SENTINELS" && error.misconfigured == nil
        }
        away.close()
        _ = try? await offThePool { set.stop() }
    }

    @Test func aDemotedPrimaryAnswersReadOnlyAndTheConnectionIsDropped() async throws {
        let server = try await ThrowawayRedis.start()
        let other = try await ThrowawayRedis.start()
        let client = try RedisClient(url: server.url, poolSize: 1)
        let admin = try RedisClient(url: server.url, poolSize: 1)
        try await client.command("SET", "k", "1")

        try await admin.command("REPLICAOF", "127.0.0.1", RedisArgument(other.port))
        await #expect { try await client.command("SET", "k", "2", retry: .onceOnBrokenConnection) } throws: {
            ($0 as? RedisError)?.code == .readOnly
        }
        let dropped = try await client.withConnection { connection in
            _ = try connection.send(["SET", "k", "3"])
            return !connection.isHealthy
        }
        #expect(dropped)

        try await admin.command("REPLICAOF", "NO", "ONE")
        try await client.command("SET", "k", "4")
        for client in [client, admin] { client.close() }
        await server.stopInBackground()
        await other.stopInBackground()
    }

    /// A primary, a replica and one Sentinel; `REDIS_SENTINELS` names a refusing port first, so clients must try the next.
    private static func startSet() async throws -> ThrowawaySentinelSet {
        let directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("sentinel-set"))
        let set = try await ThrowawaySentinelSet.start(
            directory: directory, masterName: TestEnvironment.uniqueName("main"), sentinels: 1, unreachableSentinelFirst: true)
        #expect(set.workerEnvironment["REDIS_SENTINELS"]?.hasPrefix("\(set.unreachableSentinel!.address),") == true)
        return set
    }

    private static func port(of client: RedisClient) async throws -> Int? {
        try await client.command("CONFIG", "GET", "port").array?.last?.integer.map(Int.init)
    }
}
