import Foundation
import Redis
import Synchronization

/// A Redis primary, a replica and three Sentinels (quorum 2) on loopback ports of their own, for the failover chaos
/// scenarios: a `CountdownSystem` built with `.target(set)` points its workers at the Sentinels (`REDIS_SENTINELS`,
/// `REDIS_SENTINEL_MASTER`) instead of a `REDIS_URL`, and its own Redis client discovers the primary the same way.
///
/// Every server runs daemonized in `directory` (pid files and logs there) with AOF on (`appendfsync everysec`), as in
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
    /// Port -> server name (`primary`, `replica`), for `kill`.
    private let servers: [Int: String]
    private let clients = Mutex<[Int: RedisClient]>([:])
    private let stopped = Mutex(false)

    /// Starts the primary, a replica in sync with it, and three Sentinels once each knows the replica and the other
    /// two (off the cooperative threads: the servers boot in seconds).
    public static func start(
        directory: String, masterName: String, downAfterMilliseconds: Int = 1000, failoverTimeoutMilliseconds: Int = 4000
    ) async throws -> ThrowawaySentinelSet {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (primary, replica, sentinels) = try await offThePool {
            try Self.startServers(directory: directory, masterName: masterName, downAfter: downAfterMilliseconds,
                                  failoverTimeout: failoverTimeoutMilliseconds)
        }
        let set = ThrowawaySentinelSet(
            directory: directory, masterName: masterName, downAfterMilliseconds: downAfterMilliseconds,
            primaryPort: primary, replicaPort: replica, sentinelPorts: sentinels)
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

    private init(directory: String, masterName: String, downAfterMilliseconds: Int, primaryPort: Int, replicaPort: Int, sentinelPorts: [Int]) {
        self.directory = directory
        self.masterName = masterName
        self.downAfterMilliseconds = downAfterMilliseconds
        self.primaryPort = primaryPort
        self.replicaPort = replicaPort
        self.sentinelPorts = sentinelPorts
        servers = [primaryPort: "primary", replicaPort: "replica"]
    }

    deinit { stop() }

    // MARK: RedisTarget

    /// No address of its own: with `workerEnvironment`'s `REDIS_SENTINELS` and `REDIS_SENTINEL_MASTER`
    /// (`RedisConfiguration(url:environment:)`) a client discovers the current primary.
    public var harnessURL: String { "redis://sentinel-managed/0" }

    public var workerEnvironment: [String: String] {
        ["REDIS_URL": harnessURL, "REDIS_SENTINEL_MASTER": masterName,
         "REDIS_SENTINELS": sentinelPorts.map { "127.0.0.1:\($0)" }.joined(separator: ",")]
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
        for name in ["sentinel-0", "sentinel-1", "sentinel-2", "replica", "primary"] {
            if let pid = pid(of: name) { crashProcess(pid) }
        }
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
        guard let name = servers[port], let pid = pid(of: name) else {
            throw CommandFailed(command: "kill :\(port)", status: -1, output: "no server of the set on that port")
        }
        _ = try await offThePool { crashProcess(pid) }
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

    /// Every Sentinel knows the other two and sees the replica up.
    private func sentinelsAgree() async throws -> Bool {
        for port in sentinelPorts {
            let master = Self.fields(try await command(on: port, ["SENTINEL", "MASTER", RedisArgument(masterName)]))
            guard master["num-other-sentinels"] == "2", master["num-slaves"] == "1" else { return false }
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

    private func pid(of name: String) -> pid_t? {
        Self.pid(in: Self.pidFile(directory, name))
    }

    private static func pidFile(_ directory: String, _ name: String) -> String { "\(directory)/\(name).pid" }

    private static func pid(in file: String) -> pid_t? { daemonPID(pidFile: file) }

    /// Starts primary, replica (once in sync) and the three Sentinels; returns their ports. Blocks.
    private static func startServers(directory: String, masterName: String, downAfter: Int, failoverTimeout: Int) throws -> (Int, Int, [Int]) {
        var started: [String] = []
        do {
            let primary = try startServer("primary", directory: directory, started: &started)
            let replica = try startServer("replica", directory: directory, extra: ["--replicaof", "127.0.0.1", "\(primary)"], started: &started)
            try waitForSync(primary: primary)
            let sentinels = try (0..<3).map { index in
                try startSentinel(index, directory: directory, masterName: masterName, primary: primary, downAfter: downAfter,
                                  failoverTimeout: failoverTimeout, started: &started)
            }
            return (primary, replica, sentinels)
        } catch {
            for name in started.reversed() {
                crashDaemon(pidFile: pidFile(directory, name))
            }
            throw error
        }
    }

    private static func startServer(_ name: String, directory: String, extra: [String] = [], started: inout [String]) throws -> Int {
        let port = freeLoopbackPort()
        let data = "\(directory)/\(name)"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try spawnAndWait(TestEnvironment.redisServer, [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", data, "--daemonize", "yes",
            "--pidfile", pidFile(directory, name), "--logfile", "\(directory)/\(name).log",
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
        ] + extra, outputPath: "\(directory)/\(name).out")
        started.append(name)
        try waitStarted(name, port: port, directory: directory)
        return port
    }

    private static func startSentinel(
        _ index: Int, directory: String, masterName: String, primary: Int, downAfter: Int, failoverTimeout: Int, started: inout [String]
    ) throws -> Int {
        let name = "sentinel-\(index)"
        let port = freeLoopbackPort()
        let configuration = "\(directory)/\(name).conf"
        try """
            port \(port)
            bind 127.0.0.1
            daemonize yes
            pidfile \(pidFile(directory, name))
            logfile \(directory)/\(name).log
            dir \(directory)
            sentinel monitor \(masterName) 127.0.0.1 \(primary) 2
            sentinel down-after-milliseconds \(masterName) \(downAfter)
            sentinel failover-timeout \(masterName) \(failoverTimeout)
            sentinel parallel-syncs \(masterName) 1

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        try spawnAndWait(TestEnvironment.redisServer, [configuration, "--sentinel"], outputPath: "\(directory)/\(name).out")
        started.append(name)
        try waitStarted(name, port: port, directory: directory)
        return port
    }

    /// Waits for the pid file and the port (a daemonized server writes the one, then opens the other).
    private static func waitStarted(_ name: String, port: Int, directory: String) throws {
        let deadline = Date().addingTimeInterval(20)
        while pid(in: pidFile(directory, name)) == nil {
            guard Date() < deadline else { throw CommandFailed(command: "redis-server (\(name))", status: -1, output: "no pid file within 20 s") }
            usleep(20_000)
        }
        try waitForPort(port, timeout: 20)
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
        throw CommandFailed(command: "redis-server (replica)", status: -1, output: "the replica did not sync within 20 s")
    }
}
