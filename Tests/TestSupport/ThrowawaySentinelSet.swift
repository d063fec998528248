import Foundation
import Redis
import Synchronization

/// A Redis primary, a replica and three Sentinels (quorum 2; or `sentinels` of them, quorum a majority) on loopback
/// ports of their own, for the failover chaos scenarios and the Redis client's failover tests: a `CountdownSystem` built with `.target(set)` points its workers at the Sentinels (`REDIS_SENTINELS`,
/// `REDIS_SENTINEL_MASTER`) instead of a `REDIS_URL`, and its own Redis client discovers the primary the same way.
///
/// Every server is a child of the test (not daemonized: it stays in the test's process group, so `scripts/chaos`'s
/// cleanup reaches it too), with its data, log and output in `directory` and AOF on (`appendfsync everysec`), as in
/// production. The set talks to its servers with one small `RedisClient` per port, so a killed or demoted server
/// costs only its own client.
public final class ThrowawaySentinelSet: RedisTarget, @unchecked Sendable {
    /// The master name the Sentinels monitor.
    public let masterName: String
    public let directory: String
    /// How long the primary may be silent before a Sentinel calls it down.
    public let downAfterMilliseconds: Int
    /// The primary at the start (a failover makes `replicaPort` the primary).
    public let primaryPort: Int
    /// The replica at the start.
    public let replicaPort: Int
    public let sentinelPorts: [Int]
    /// With `unreachableSentinelFirst`: a port that refuses connections, named first in `REDIS_SENTINELS` (held until
    /// `stop()`), so a client must try the next Sentinel.
    public let unreachableSentinel: RefusingPort?
    /// The servers by port (the primary and the replica, for `kill`) and all of them in stopping order.
    private let servers: [Int: SpawnedProcess]
    private let processes: [SpawnedProcess]
    private let clients = Mutex<[Int: RedisClient]>([:])
    private let stopped = Mutex(false)

    /// Starts the primary, a replica in sync with it, and `sentinels` Sentinels once each knows the replica and the
    /// others (off the cooperative threads: the servers boot in seconds). With `unreachableSentinelFirst`,
    /// `workerEnvironment` names a refusing port before them.
    public static func start(
        directory: String, masterName: String, sentinels: Int = 3, unreachableSentinelFirst: Bool = false,
        downAfterMilliseconds: Int = 1000, failoverTimeoutMilliseconds: Int = 4000
    ) async throws -> ThrowawaySentinelSet {
        precondition(sentinels >= 1, "a Sentinel set needs at least one Sentinel")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let started = try await offThePool {
            try Self.startServers(directory: directory, masterName: masterName, sentinels: sentinels, downAfter: downAfterMilliseconds,
                                  failoverTimeout: failoverTimeoutMilliseconds)
        }
        let set = ThrowawaySentinelSet(directory: directory, masterName: masterName, downAfterMilliseconds: downAfterMilliseconds, started: started,
                                       unreachableSentinel: unreachableSentinelFirst ? RefusingPort() : nil)
        do {
            try await waitUntil(timeout: .seconds(30), every: .milliseconds(200), "the Sentinels to find the replica and each other") {
                try await set.sentinelsAgree()
            }
        } catch {
            set.stop()
            throw error
        }
        return set
    }

    private init(directory: String, masterName: String, downAfterMilliseconds: Int, started: [Server], unreachableSentinel: RefusingPort?) {
        self.directory = directory
        self.masterName = masterName
        self.downAfterMilliseconds = downAfterMilliseconds
        primaryPort = started[0].port
        replicaPort = started[1].port
        sentinelPorts = started[2...].map(\.port)
        servers = [primaryPort: started[0].process, replicaPort: started[1].process]
        processes = started.reversed().map(\.process)
        self.unreachableSentinel = unreachableSentinel
    }

    deinit { stop() }

    // MARK: RedisTarget

    /// No address of its own: with `workerEnvironment`'s `REDIS_SENTINELS` (the unreachable Sentinel first, if any)
    /// and `REDIS_SENTINEL_MASTER` (`RedisConfiguration(url:environment:)`) a client discovers the current primary.
    public var harnessURL: String { "redis://sentinel-managed/0" }

    public var workerEnvironment: [String: String] {
        ["REDIS_URL": harnessURL, "REDIS_SENTINEL_MASTER": masterName,
         "REDIS_SENTINELS": ([unreachableSentinel?.address].compactMap { $0 } + sentinelPorts.map { "127.0.0.1:\($0)" }).joined(separator: ",")]
    }

    /// SIGKILL to every server of the set (Sentinels first, so none starts a failover while the rest go), waiting
    /// until each is gone. Safe to call more than once.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        for client in clients.withLock({ Array($0.values) }) { client.close() }
        for process in processes { Self.killAndReap(process) }
        unreachableSentinel?.release()
    }

    // MARK: Commands

    /// One command on the server at `port`, whatever its role; an error reply is thrown.
    @discardableResult
    public func command(on port: Int, _ arguments: [RedisArgument]) async throws -> RedisReply {
        try await client(port).command(arguments).throwIfError(context: "127.0.0.1:\(port)")
    }

    /// The port a reachable Sentinel names as the primary, or nil.
    public func primaryAccordingToSentinels() async -> Int? {
        for port in sentinelPorts {
            guard let reply = try? await command(on: port, ["SENTINEL", "get-master-addr-by-name", RedisArgument(masterName)]),
                  let fields = reply.array, fields.count == 2, let named = fields[1].integer else { continue }
            return Int(named)
        }
        return nil
    }

    /// `master` or `slave` (ROLE's first field), nil when the server does not answer.
    public func role(_ port: Int) async -> String? {
        (try? await command(on: port, ["ROLE"]))?.array?.first?.string
    }

    /// SIGKILL to the server on `port` (a crash: no final write), waiting until it is gone.
    public func kill(_ port: Int) async throws {
        guard let process = servers[port] else { throw HarnessError("kill :\(port): no server of the set on that port") }
        try await offThePool { Self.killAndReap(process) }
    }

    /// Waits until the Sentinels name `port` and it answers as the primary; returns the seconds waited.
    @discardableResult
    public func waitForPrimary(_ port: Int, timeout: Duration = .seconds(30)) async throws -> Double {
        let started = Date()
        try await waitUntil(timeout: timeout, every: .milliseconds(50), "the Sentinels to name :\(port) the primary") {
            guard await self.primaryAccordingToSentinels() == port else { return false }
            return await self.role(port) == "master"
        }
        return Date().timeIntervalSince(started)
    }

    // MARK: Inside

    private func client(_ port: Int) -> RedisClient {
        clients.withLock { clients in
            if let client = clients[port] { return client }
            let client = RedisClient(
                configuration: RedisConfiguration(host: "127.0.0.1", port: port, connectTimeout: .seconds(2), commandTimeout: .seconds(5)),
                poolSize: 1, name: "sentinel-set-\(port)")
            clients[port] = client
            return client
        }
    }

    /// Every Sentinel knows the others and sees the replica up.
    private func sentinelsAgree() async throws -> Bool {
        for port in sentinelPorts {
            let master = Self.fields(try await command(on: port, ["SENTINEL", "MASTER", RedisArgument(masterName)]))
            guard master["num-other-sentinels"] == "\(sentinelPorts.count - 1)", master["num-slaves"] == "1" else { return false }
            let replicas = try await command(on: port, ["SENTINEL", "REPLICAS", RedisArgument(masterName)]).array ?? []
            let flags = replicas.first.map { Self.fields($0)["flags"] ?? "" } ?? "disconnected"
            if flags.contains("s_down") || flags.contains("disconnected") { return false }
        }
        return true
    }

    /// A flat name/value array reply as a dictionary.
    private static func fields(_ reply: RedisReply) -> [String: String] {
        let values = reply.array?.map { $0.string ?? "" } ?? []
        return Dictionary(stride(from: 0, to: values.count - 1, by: 2).map { (values[$0], values[$0 + 1]) }) { $1 }
    }

    /// One started server of the set.
    private struct Server {
        let port: Int
        let process: SpawnedProcess
    }

    /// SIGKILL (a crash: no final write), then reaps the child (up to 10 s).
    private static func killAndReap(_ process: SpawnedProcess) {
        process.signal(SIGKILL)
        _ = process.waitBlocking(deadline: Date().addingTimeInterval(10))
    }

    /// Starts primary, replica (once in sync) and the Sentinels (quorum a majority of them), in that order. Blocks.
    private static func startServers(
        directory: String, masterName: String, sentinels: Int, downAfter: Int, failoverTimeout: Int
    ) throws -> [Server] {
        var started: [Server] = []
        do {
            started.append(try startServer("primary", directory: directory))
            let primary = started[0].port
            started.append(try startServer("replica", directory: directory, extra: ["--replicaof", "127.0.0.1", "\(primary)"]))
            try waitForSync(primary: primary)
            for index in 0..<sentinels {
                started.append(try startSentinel(index, directory: directory, masterName: masterName, primary: primary, quorum: sentinels / 2 + 1,
                                                 downAfter: downAfter, failoverTimeout: failoverTimeout))
            }
            return started
        } catch {
            for server in started.reversed() { killAndReap(server.process) }
            throw error
        }
    }

    private static func startServer(_ name: String, directory: String, extra: [String] = []) throws -> Server {
        let port = freeLoopbackPort()
        let data = "\(directory)/\(name)"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        return try spawn(name, port: port, directory: directory, arguments: [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", data, "--daemonize", "no", "--logfile", "\(directory)/\(name).log",
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
        ] + extra)
    }

    private static func startSentinel(
        _ index: Int, directory: String, masterName: String, primary: Int, quorum: Int, downAfter: Int, failoverTimeout: Int
    ) throws -> Server {
        let name = "sentinel-\(index)"
        let port = freeLoopbackPort()
        let configuration = "\(directory)/\(name).conf"
        try """
            port \(port)
            bind 127.0.0.1
            daemonize no
            logfile \(directory)/\(name).log
            dir \(directory)
            sentinel monitor \(masterName) 127.0.0.1 \(primary) \(quorum)
            sentinel down-after-milliseconds \(masterName) \(downAfter)
            sentinel failover-timeout \(masterName) \(failoverTimeout)
            sentinel parallel-syncs \(masterName) 1

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        return try spawn(name, port: port, directory: directory, arguments: [configuration, "--sentinel"])
    }

    /// Starts `redis-server` as a child (output to `<name>.out`) and waits until it accepts connections on `port`.
    private static func spawn(_ name: String, port: Int, directory: String, arguments: [String]) throws -> Server {
        let output = "\(directory)/\(name).out"
        let process = try SpawnedProcess(TestEnvironment.redisServer, arguments, stdout: .file(output), stderr: .file(output))
        do {
            try waitForPort(port, timeout: 20)
        } catch {
            killAndReap(process)
            throw HarnessError("redis-server (\(name)) did not accept connections on :\(port) within 20 s; see \(directory)/\(name).log")
        }
        return Server(port: port, process: process)
    }

    /// Waits until the primary reports its replica online (`INFO replication`), through a client of its own.
    private static func waitForSync(primary: Int) throws {
        let deadline = Date().addingTimeInterval(20)
        let configuration = RedisConfiguration(host: "127.0.0.1", port: primary, connectTimeout: .seconds(2), commandTimeout: .seconds(5))
        while Date() < deadline {
            let connection = try? RedisConnection(configuration: configuration)
            defer { connection?.close() }
            if let info = try? connection?.command(["INFO", "replication"]).string, info.contains("state=online") { return }
            usleep(100_000)
        }
        throw HarnessError("the replica did not sync with the primary within 20 s")
    }
}
