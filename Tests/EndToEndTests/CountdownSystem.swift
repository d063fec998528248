import CountdownDomain
import CountdownStore
import CountdownWorker
import DelayQueue
import Foundation
import Postgres
import Redis
import TestSupport

/// A whole Countdown deployment for one test: its own database (migrated), its own Redis namespace, its own
/// fake FCM, and real `countdown-worker` processes. Rows are written the way the existing backend would.
final class CountdownSystem: @unchecked Sendable {
    let database: TestDatabase
    let db: PostgresClient
    let redis: RedisClient
    let namespace: String
    let fake: FakeFCMProcess
    let fakeClient: FakeFCMClient
    let settings: [String: String]
    private(set) var workers: [WorkerHandle] = []

    /// - Parameter settings: worker environment on top of the defaults (small leads so tests run in seconds).
    init(settings: [String: String] = [:]) async throws {
        database = try await TestDatabase.create(prefix: "e2e")
        db = PostgresClient(configuration: database.configuration, maxConnections: 4)
        _ = try await Migrator().migrate(db)
        redis = RedisClient(configuration: try RedisConfiguration(url: TestEnvironment.redisURL), poolSize: 2)
        namespace = TestEnvironment.uniqueName("e2e")
        fake = try await offThePool { try FakeFCMProcess.reachable() }
        fakeClient = FakeFCMClient(fake)
        self.settings = [
            "START_LEAD_SECONDS": "5", "REMINDER_LEAD_SECONDS": "3", "EXPIRE_AFTER_SECONDS": "30",
            "RECONCILE_INTERVAL_SECONDS": "300", "SHUTDOWN_GRACE_SECONDS": "5", "WORKER_CONCURRENCY": "32", "JOB_LEASE_SECONDS": "4",
        ].merging(settings) { $1 }
    }

    /// The environment a worker of this system runs with.
    var workerEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTDOWN_TEST") }
        environment.merge([
            "DATABASE_URL": database.url, "REDIS_URL": TestEnvironment.redisURL, "COUNTDOWN_NAMESPACE": namespace,
            "PUSH_TRANSPORT": "fcm", "GOOGLE_APPLICATION_CREDENTIALS": fake.accountPath, "FCM_BASE_URL": fake.baseURL,
            "HTTP_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json", "LOG_LEVEL": "info",
        ]) { $1 }
        return environment.merging(settings) { $1 }
    }

    @discardableResult
    func startWorker(_ overrides: [String: String] = [:]) throws -> WorkerHandle {
        let worker = try WorkerHandle(environment: workerEnvironment.merging(overrides) { $1 }, index: workers.count)
        workers.append(worker)
        return worker
    }

    func stop() async {
        for worker in workers { worker.terminate() }
        for worker in workers { await worker.waitForExit(timeout: 10) }
        fake.stop()
        db.close()
        _ = try? await redis.command(["EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1", "0",
                                      RedisArgument("{\(namespace)}*")])
        redis.close()
        try? await database.drop()
    }

    // MARK: Writing rows as the backend would

    func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws {
        _ = try await db.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> [PostgresRow] {
        try await db.query(sql, parameters)
    }

    func user(_ id: String, name: String? = nil, locale: String = "tr") async throws {
        try await execute("INSERT INTO users (id, display_name, locale) VALUES ($1, $2, $3)", [id, name ?? id.capitalized, locale])
    }

    /// An iOS device with both tokens unless told otherwise; tokens derive from the device id.
    func device(_ id: String, user: String?, platform: String = "ios", fcm: Bool = true, pushToStart: Bool = true, locale: String? = nil) async throws {
        try await execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale) VALUES ($1, $2, $3, $4, $5, $6)
            """, [id, user, platform, fcm ? Self.fcmToken(id) : nil, pushToStart ? Self.pushToStartToken(id) : nil, locale])
    }

    /// A scheduled stream starting `seconds` from the database's now, with its creator and guests.
    func stream(_ id: String, title: String? = nil, startsIn seconds: Double, creator: String, guests: [String] = []) async throws {
        try await db.transaction { connection in
            try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + make_interval(secs => $3))",
                                   [id, title ?? "Stream \(id)", seconds])
            try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'creator', 0)", [id, creator])
            for (index, guest) in guests.enumerated() {
                try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'guest', $3)",
                                       [id, guest, index + 1])
            }
        }
    }

    func session(stream: String, device: String, user: String?) async throws {
        try await execute("""
            INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ($1, $2, $3, $4)
            """, [stream, device, user, Self.sessionToken(stream, device)])
    }

    func plannedStart(_ stream: String) async throws -> Date {
        try await query("SELECT planned_start_at FROM streams WHERE id = $1", [stream])[0].decode("planned_start_at")
    }

    static func fcmToken(_ device: String) -> String { "fcm-" + device }
    static func pushToStartToken(_ device: String) -> String { hex("pts-" + device) }
    static func sessionToken(_ stream: String, _ device: String) -> String { hex("session-\(stream)-\(device)") }

    private static func hex(_ text: String) -> String {
        Array(text.utf8).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Observing the fake FCM

    func pushes() async throws -> [RecordedPush] {
        var all: [RecordedPush] = []
        var since = 0
        while true {
            let answer = try await fakeClient.call("GET", "/fake/messages?since=\(since)&limit=5000")
            let page = try RecordedPush.decode(answer.body)
            all += page
            guard let last = page.last, page.count == 5000 else { return all }
            since = last.seq
        }
    }

    /// Waits until the accepted pushes satisfy `condition`, then returns them.
    @discardableResult
    func waitForPushes(timeout: Duration = .seconds(20), _ what: String, _ condition: @escaping ([RecordedPush]) -> Bool) async throws -> [RecordedPush] {
        var latest: [RecordedPush] = []
        try await waitUntil(timeout: timeout, every: .milliseconds(50), what + " (have \(latest.count) pushes)") {
            latest = try await self.pushes()
            return condition(latest)
        }
        return latest
    }

    func fault(_ rule: [String: Any]) async throws { try await fakeClient.fault(rule) }

    /// Waits until the relay has taken every outbox row and the queue holds nothing due or claimed (jobs
    /// scheduled for later may wait).
    func waitForIdle(timeout: Duration = .seconds(120), _ what: String) async throws {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        try await waitUntil(timeout: timeout, every: .milliseconds(100), what) { [self] in
            let outbox = try await query("SELECT count(*) AS n FROM countdown_outbox")[0].decode("n", as: Int.self)
            let stats = try await queue.stats()
            return outbox == 0 && stats.dueNow == 0 && stats.leased == 0
        }
    }

    /// The queue's counts now (its own connection; the system's namespace).
    func queueStats() async throws -> QueueStats {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        return try await queue.stats()
    }

    /// The ids of the jobs of `kind` the queue holds (waiting, due or claimed).
    func queuedJobs(kind: String) async throws -> [String] {
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        return try await queue.jobIDs(prefix: "", kind: kind)
    }

    /// Runs `countdown-admin` against this system (on a thread of its own: it blocks while the command runs).
    func admin(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let executable = TestEnvironment.productsDirectory.appendingPathComponent("countdown-admin")
        let environment = workerEnvironment
        return try await offThePool { try runProcess(executable.path, arguments, environment: environment) }
    }
}
