/// How a `CountdownSystem` is put together: the worker settings, which servers it uses, how its fake FCM runs.
public struct SystemOptions: Sendable {
    /// Worker environment on top of `defaults`.
    public var settings: [String: String] = [:]
    /// The worker settings every worker starts from.
    public var defaults: SystemDefaults = .endToEnd
    public var redis: SystemRedis = .shared
    public var postgres: SystemPostgres = .shared
    /// Server settings of a PostgreSQL of the system's own (`SystemPostgres.own`), on top of `max_connections` 400.
    public var postgresSettings: [String: String] = [:]
    /// `LOG_LEVEL=debug` for the fake FCM, so its log lists every send it answered.
    public var fakeDebug = false
    /// The fake's `--threads`.
    public var fakeThreads = 8
    /// The fake's `--record-flush-ms` (0: every accepted message is written at once).
    public var recordFlushMilliseconds = 0
    /// When above 0, a latency fault of this many milliseconds on every send, set as the system starts.
    public var latencyMilliseconds = 0
    /// Prefix of the database and of the log directory's name.
    public var name = "e2e"
    /// Whether the system migrates its new database to this build's schema as it starts; false leaves it empty
    /// (an upgrade rehearsal migrates it with an older build's `countdown-admin migrate`).
    public var migrate = true

    public init() {}
}

/// The worker settings a system starts from (`SystemOptions.settings` go on top).
public enum SystemDefaults: Sendable {
    /// Small leads and leases, so an end-to-end test runs in seconds.
    case endToEnd
    /// The chaos runs' deployment: an hour's lead, wide concurrency (the Python harness' `Deployment`).
    case chaos

    public var settings: [String: String] {
        switch self {
        case .endToEnd:
            [
                "START_LEAD_SECONDS": "5", "REMINDER_LEAD_SECONDS": "3", "EXPIRE_AFTER_SECONDS": "30",
                "RECONCILE_INTERVAL_SECONDS": "300", "SHUTDOWN_GRACE_SECONDS": "5", "WORKER_CONCURRENCY": "32", "JOB_LEASE_SECONDS": "4",
            ]
        case .chaos:
            [
                "START_LEAD_SECONDS": "3600", "REMINDER_LEAD_SECONDS": "600", "EXPIRE_AFTER_SECONDS": "3600",
                "WORKER_CONCURRENCY": "64", "PUSH_CONCURRENCY": "256", "JOB_LEASE_SECONDS": "10",
                "SHUTDOWN_GRACE_SECONDS": "10", "RECONCILE_INTERVAL_SECONDS": "300",
            ]
        }
    }

    /// Accepted messages the fake keeps in memory (`--keep`; `CountdownSystem.pushes()` sees only these, the record
    /// file has all): the fake's default for end-to-end tests, 1000 for chaos runs of many thousand pushes.
    public var fakeKeep: Int {
        switch self {
        case .endToEnd: 100_000
        case .chaos: 1000
        }
    }
}
