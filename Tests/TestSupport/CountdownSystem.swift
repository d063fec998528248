import CountdownStore
import DelayQueue
import Foundation
import Postgres
import Redis
import Synchronization

/// A whole Countdown deployment for one test or chaos scenario: its own database (migrated), its own Redis
/// namespace (or Redis server), its own fake FCM recording what it accepted, and real `countdown-worker`
/// processes. Rows are written the way the existing backend would. Logs go to `directory`.
public final class CountdownSystem: @unchecked Sendable {
    public let options: SystemOptions
    public let database: TestDatabase
    public let db: PostgresClient
    /// The harness' own connection to the system's Redis (`RedisTarget.harnessURL`).
    public let redis: RedisClient
    public let namespace: String
    public let fake: FakeFCMProcess
    public let fakeClient: FakeFCMClient
    /// This system's logs: `worker-<index>.log`, the fake's `fake-fcm/`, its record file.
    public let directory: String
    /// The worker settings every worker starts with (`SystemOptions.defaults` and `settings`).
    public var settings: [String: String]
    /// The Redis server of this system's own (`SystemRedis.own`).
    public private(set) var ownRedis: ThrowawayRedis?
    /// The PostgreSQL server of this system's own (`SystemPostgres.own`).
    public private(set) var ownPostgres: ThrowawayPostgres?
    /// Where `startWorker` and `admin` find `countdown-worker` and `countdown-admin` (`TestEnvironment.systemBinDirectory`;
    /// an upgrade rehearsal points it at an older build between steps).
    public var binDirectory = TestEnvironment.systemBinDirectory
    /// The Redis the workers use; nil for the shared server.
    private let redisTarget: (any RedisTarget)?
    private let processes = Mutex<(alive: [SystemWorker], retired: [SystemWorker])>(([], []))

    /// - Parameter settings: worker environment on top of the defaults (small leads so tests run in seconds).
    public convenience init(settings: [String: String] = [:]) async throws {
        var options = SystemOptions()
        options.settings = settings
        try await self.init(options)
    }

    public init(_ options: SystemOptions) async throws {
        self.options = options
        directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName(options.name))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        settings = options.defaults.settings.merging(options.settings) { $1 }

        var serverURL = TestEnvironment.databaseURL
        if case .own = options.postgres {
            let settings = ["max_connections": "400"].merging(options.postgresSettings) { $1 }
            let server = try await offThePool { try ThrowawayPostgres(settings: settings) }
            ownPostgres = server
            serverURL = server.url
        }
        switch options.redis {
        case .shared: redisTarget = nil
        case .own:
            // As the shared server: AOF fsynced every second, so a SIGKILL may lose the last second's writes.
            let server = try await ThrowawayRedis.start(extraArguments: ["--appendfsync", "everysec"])
            ownRedis = server
            redisTarget = server
        case .target(let target): redisTarget = target
        }
        database = try await TestDatabase.create(prefix: options.name, serverURL: serverURL)
        db = PostgresClient(configuration: database.configuration, maxConnections: 4)
        if options.migrate { _ = try await Migrator().migrate(db) }
        // With the target's worker environment, so a Sentinel set's harness client finds the primary as the workers do.
        redis = RedisClient(
            configuration: try RedisConfiguration(url: redisTarget?.harnessURL ?? TestEnvironment.redisURL, environment: redisTarget?.workerEnvironment ?? [:]),
            poolSize: 2)
        namespace = TestEnvironment.uniqueName(options.name)
        let arguments = [
            "--record", (directory as NSString).appendingPathComponent("accepted.jsonl"), "--record-flush-ms", "\(options.recordFlushMilliseconds)",
            "--keep", "\(options.defaults.fakeKeep)", "--threads", "\(options.fakeThreads)",
        ]
        let fakeDirectory = (directory as NSString).appendingPathComponent("fake-fcm")
        fake = try await offThePool {
            try FakeFCMProcess.reachable(arguments: arguments, logLevel: options.fakeDebug ? "debug" : nil, directory: fakeDirectory)
        }
        fakeClient = FakeFCMClient(fake)
        if options.latencyMilliseconds > 0 {
            try await fakeClient.fault(["latencyMs": options.latencyMilliseconds])
        }
    }

    /// The file the fake appends every accepted message to, one JSON object a line (`PushTally` reads it).
    public var fakeRecordPath: String { (directory as NSString).appendingPathComponent("accepted.jsonl") }

    /// START_LEAD_SECONDS of this system's workers.
    public var startLead: Int { Int(settings["START_LEAD_SECONDS"] ?? "") ?? 0 }

    /// The workers started and not retired, in start order.
    public var workers: [SystemWorker] { processes.withLock { $0.alive } }

    /// Workers moved out of the live list (`retire`, `stopWorkers`).
    public var retired: [SystemWorker] { processes.withLock { $0.retired } }

    /// The environment a worker of this system runs with (and `countdown-admin`).
    public var workerEnvironment: [String: String] {
        // The harness' own variables (COUNTDOWN_TEST_*, COUNTDOWN_SYSTEM_BIN_DIR, ...) are not the worker's.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTDOWN_") }
        environment.merge([
            "DATABASE_URL": database.url, "COUNTDOWN_NAMESPACE": namespace,
            "PUSH_TRANSPORT": "fcm", "GOOGLE_APPLICATION_CREDENTIALS": fake.accountPath, "FCM_BASE_URL": fake.baseURL,
            "HTTP_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json", "LOG_LEVEL": "info",
        ]) { $1 }
        environment.merge(redisTarget?.workerEnvironment ?? ["REDIS_URL": TestEnvironment.redisURL]) { $1 }
        return environment.merging(settings) { $1 }
    }

    /// Starts one worker with `overrides` on top of `workerEnvironment`; `clockOffset` runs its wall clock ahead or
    /// behind under libfaketime (`"+600s"`, `"-30s"`).
    @discardableResult
    public func startWorker(_ overrides: [String: String] = [:], clockOffset: String? = nil) throws -> SystemWorker {
        let environment = workerEnvironment.merging(overrides) { $1 }
        return try processes.withLock { processes in
            let index = processes.alive.count + processes.retired.count
            let worker = try SystemWorker(
                executable: binDirectory.appendingPathComponent("countdown-worker").path, environment: environment,
                index: index, logPath: (directory as NSString).appendingPathComponent("worker-\(index).log"), clockOffset: clockOffset)
            processes.alive.append(worker)
            return worker
        }
    }

    /// Starts `count` workers and waits (up to 60 s) until each serves health and metrics; throws, naming its log,
    /// when one exits instead.
    @discardableResult
    public func startWorkers(_ count: Int, _ overrides: [String: String] = [:]) async throws -> [SystemWorker] {
        let started = try (0..<count).map { _ in try startWorker(overrides) }
        try await waitUntil(timeout: .seconds(60), every: .milliseconds(50), "the workers to serve health and metrics") {
            started.allSatisfy { $0.metricsAddress() != nil || !$0.isRunning }
        }
        if let exited = started.first(where: { !$0.isRunning }) {
            throw HarnessError("worker \(exited.index) exited at start with \(exited.exitStatus ?? -1); see \(exited.logPath)")
        }
        return started
    }

    /// Moves a worker (exited, or about to be) out of the live list.
    public func retire(_ worker: SystemWorker) {
        processes.withLock { processes in
            guard let position = processes.alive.firstIndex(where: { $0 === worker }) else { return }
            processes.retired.append(processes.alive.remove(at: position))
        }
    }

    /// SIGTERM to every live worker, then retires them; returns their exit statuses (nil: killed after `timeout`).
    public func stopWorkers(timeout: Duration = .seconds(30)) async -> [Int32?] {
        let stopping = workers
        for worker in stopping { worker.terminate() }
        var statuses: [Int32?] = []
        for worker in stopping {
            statuses.append(await worker.process.exitStatus(within: timeout))
            retire(worker)
        }
        return statuses
    }

    /// Stops everything: the workers, the fake, its own servers; drops the database and deletes the namespace.
    public func stop() async {
        let all = processes.withLock { $0.alive + $0.retired }
        for worker in all { worker.terminate() }
        for worker in all { await worker.waitForExit(timeout: 10) }
        let fake = self.fake
        _ = try? await offThePool { fake.stop() }
        db.close()
        if redisTarget == nil {
            _ = try? await redis.command(["EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1", "0",
                                          RedisArgument("{\(namespace)}*")])
        }
        redis.close()
        try? await database.drop()
        if let target = redisTarget { _ = try? await offThePool { target.stop() } }
        if let server = ownPostgres { _ = try? await offThePool { server.stop() } }
    }
}
