import Foundation
import Redis
import TestSupport

/// A primary, a replica and one Sentinel watching them on loopback, for failover tests (here, not in TestSupport,
/// because it talks to them with the Redis client).
final class ThrowawaySentinelSet: @unchecked Sendable {
    let masterName: String
    let primary: ThrowawayRedis
    let replica: ThrowawayRedis
    let sentinelPort: Int
    /// The unreachable Sentinel named first in `environment`, held for the set's life.
    private let unreachable = RefusingPort()
    private let sentinelDirectory: String

    private init(primary: ThrowawayRedis, replica: ThrowawayRedis) throws {
        masterName = TestEnvironment.uniqueName("main")
        self.primary = primary
        self.replica = replica
        sentinelPort = freeLoopbackPort()
        sentinelDirectory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("sentinel"))
        try FileManager.default.createDirectory(atPath: sentinelDirectory, withIntermediateDirectories: true)
        let configuration = """
            port \(sentinelPort)
            bind 127.0.0.1
            daemonize yes
            pidfile \(sentinelDirectory)/sentinel.pid
            logfile \(sentinelDirectory)/sentinel.log
            dir \(sentinelDirectory)
            sentinel monitor \(masterName) 127.0.0.1 \(primary.port) 1
            sentinel down-after-milliseconds \(masterName) 1000
            sentinel failover-timeout \(masterName) 4000
            """
        let file = "\(sentinelDirectory)/sentinel.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        try spawnAndWait(TestEnvironment.redisServer, [file, "--sentinel"])
        try waitForPort(sentinelPort)
    }

    /// Starts the primary, a replica in sync with it, and the Sentinel once it knows the replica.
    static func start() async throws -> ThrowawaySentinelSet {
        let primary = try await ThrowawayRedis.start()
        let replica = try await ThrowawayRedis.start(extraArguments: ["--replicaof", "127.0.0.1", "\(primary.port)"])
        let probe = try RedisClient(url: primary.url, poolSize: 1)
        defer { probe.close() }
        try await waitUntil(timeout: .seconds(15), "the replica to sync") {
            (try await probe.command("INFO", "replication").string ?? "").contains("state=online")
        }
        let set = try await offThePool { try ThrowawaySentinelSet(primary: primary, replica: replica) }
        try await set.waitUntilSentinelKnowsAReplica()
        return set
    }

    /// `REDIS_SENTINELS` (an unreachable Sentinel first, so clients must try the next) and `REDIS_SENTINEL_MASTER`.
    var environment: [String: String] {
        ["REDIS_SENTINELS": "\(unreachable.address),127.0.0.1:\(sentinelPort)", "REDIS_SENTINEL_MASTER": masterName]
    }

    /// Asks the Sentinel (a client of its own).
    @discardableResult
    func sentinelCommand(_ arguments: [RedisArgument]) async throws -> RedisReply {
        let client = try RedisClient(url: "redis://127.0.0.1:\(sentinelPort)", poolSize: 1)
        defer { client.close() }
        return try await client.command(arguments)
    }

    /// The port the Sentinel names as the primary.
    func primaryPortAccordingToSentinel() async throws -> Int? {
        let reply = try await sentinelCommand(["SENTINEL", "get-master-addr-by-name", RedisArgument(masterName)])
        return reply.array?.last?.integer.map(Int.init)
    }

    /// `SENTINEL FAILOVER` and waits until the Sentinel names the replica as primary.
    func forceFailover() async throws {
        try await sentinelCommand(["SENTINEL", "FAILOVER", RedisArgument(masterName)])
        try await waitUntil(timeout: .seconds(20), "the Sentinel to promote the replica") {
            try await self.primaryPortAccordingToSentinel() == self.replica.port
        }
    }

    private func waitUntilSentinelKnowsAReplica() async throws {
        try await waitUntil(timeout: .seconds(20), "the Sentinel to find the replica") {
            let replicas = try await self.sentinelCommand(["SENTINEL", "REPLICAS", RedisArgument(self.masterName)]).array ?? []
            return replicas.contains { entry in
                let fields = entry.array?.compactMap(\.string) ?? []
                let pairs = Dictionary(stride(from: 0, to: fields.count - 1, by: 2).map { (fields[$0], fields[$0 + 1]) }) { $1 }
                let flags = pairs["flags"] ?? "disconnected"
                return pairs["port"] == "\(self.replica.port)" && !flags.contains("disconnected") && !flags.contains("s_down")
            }
        }
    }

    func stop() async {
        _ = try? await offThePool { stopDaemon(pidFile: "\(self.sentinelDirectory)/sentinel.pid") }
        await replica.stopInBackground()
        await primary.stopInBackground()
    }
}
