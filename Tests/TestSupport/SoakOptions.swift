/// How a `Soak` runs: its length, how often it reads the system, how fast streams come, the short retention, and
/// the life of each stream (seconds from its creation, on the end-to-end defaults' short leads).
public struct SoakOptions: Sendable, Equatable {
    /// The run's length in seconds.
    public var seconds: Double
    /// Seconds between two readings (one row of the table).
    public var sampleSeconds: Double
    /// Streams created per second.
    public var streamsPerSecond: Double
    /// The workers' `RETENTION_DAYS` (0.002 is about 3 minutes).
    public var retentionDays: Double
    /// The workers' `RETENTION_INTERVAL_SECONDS`.
    public var prunerIntervalSeconds: Int
    /// Workers in the fleet.
    public var workers = 2
    /// The fake FCM's answer latency.
    public var latencyMilliseconds = 30
    /// A new stream's planned start, this long after it is created.
    public var plannedIn = 30.0
    /// The workers' `START_LEAD_SECONDS`: a start window of 20 s, so a start delayed by this machine's load shows
    /// as late rather than lost (a start job past the planned start sends nothing).
    public var startLeadSeconds = 20
    /// The backend sets a stream `started` (which ends its activities) this long after its planned start; one in ten
    /// streams is left to the worker's expiry instead.
    public var endAfter = 5.0
    /// A Redis server of the system's own (its memory and keys are the soak's alone); false uses the shared one,
    /// which must then hold nothing else (`scripts/soak` starts one for the run).
    public var ownRedis = true
    /// When set, a PostgreSQL of the system's own with these settings (the short run scales autovacuum's naptime with
    /// its retention); nil uses the shared server.
    public var ownPostgresSettings: [String: String]?
    /// People seeded once (three users a stream, with 1-4 devices each); stream n takes the people of n modulo this.
    public var people = 300

    public init(seconds: Double, sampleSeconds: Double, streamsPerSecond: Double, retentionDays: Double, prunerIntervalSeconds: Int) {
        self.seconds = seconds
        self.sampleSeconds = sampleSeconds
        self.streamsPerSecond = streamsPerSecond
        self.retentionDays = retentionDays
        self.prunerIntervalSeconds = prunerIntervalSeconds
    }

    /// `scripts/soak --minutes N`: a reading every 30 s (10 s under 10 minutes), a stream a second, RETENTION_DAYS
    /// 0.002 (173 s), the pruner every 15 s.
    public static func documentation(minutes: Double) -> SoakOptions {
        SoakOptions(seconds: minutes * 60, sampleSeconds: minutes < 10 ? 10 : 30, streamsPerSecond: 1, retentionDays: 0.002,
                    prunerIntervalSeconds: 15)
    }

    /// The short run `scripts/test` affords: 3 minutes, a reading every 10 s, RETENTION_DAYS 0.0002 (17 s), the pruner
    /// every 3 s, so the tables reach their steady size within the first quarter. Time is compressed for PostgreSQL
    /// too: on a server of its own, autovacuum looks every 5 s instead of every minute (the documentation run's
    /// retention is three of its naptimes; this one's three of 5 s), else a table's bytes are still growing towards
    /// the first vacuums when the run ends.
    public static var quick: SoakOptions {
        var options = SoakOptions(seconds: 180, sampleSeconds: 10, streamsPerSecond: 1, retentionDays: 0.0002, prunerIntervalSeconds: 3)
        options.ownPostgresSettings = ["autovacuum_naptime": "5s"]
        return options
    }

    /// The worker settings on top of the end-to-end defaults (REMINDER_LEAD_SECONDS 3, EXPIRE_AFTER_SECONDS 30).
    public var workerSettings: [String: String] {
        ["RETENTION_DAYS": "\(retentionDays)", "RETENTION_INTERVAL_SECONDS": "\(prunerIntervalSeconds)",
         "START_LEAD_SECONDS": "\(startLeadSeconds)"]
    }
}
