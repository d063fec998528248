import Foundation

/// Everything `countdown-bench system` measured (also written with `--json`; the names are those of the figures in
/// docs/benchmarks.md "System").
struct SystemBenchResults: Codable, Sendable {
    var streams: Int
    var reminders: Int
    var latencyMs: Int
    var androidShare: Double
    var cores: Int
    var postgresCollation: String?
    var seedPeople: PeopleSeeding?
    var startupReconcile: [StartupReconcile] = []
    var bursts: [Burst] = []
    var reminderFanout: ReminderFanout?
    var giantStream: GiantStream?
    /// Exit statuses of each fleet on SIGTERM, by its worker count (nil: still running after the timeout).
    var workerExits: [String: [Int32?]] = [:]

    /// The measured phases in the order they ran, each with its name in the report (the reminder fan-out's is
    /// `reminders`), its seeding and its usage; the giant stream only with `giant`.
    func phases(reminders: String, giant: Bool = true) -> [(name: String, seeding: Seeding, usage: Usage)] {
        bursts.map { ("burst w\($0.workers)r\($0.run)", $0.seeding, $0.usage) } + (reminderFanout.map { [(reminders, $0.seeding, $0.usage)] } ?? [])
            + (giant ? giantStream.map { [("giant stream", $0.seeding, $0.usage)] } ?? [] : [])
    }

    struct PeopleSeeding: Codable, Sendable {
        var seconds: Double
        var users: Int
        var devices: Int
    }

    struct StartupReconcile: Codable, Sendable {
        var workers: Int
        var streams: Int
        var seconds: Double
    }

    /// Inserting rows planned a day ahead, relaying them, and moving them to the due second.
    struct Seeding: Codable, Sendable {
        var insertSeconds: Double
        var relaySeconds: Double
        var relayRowsPerSecond: Int
        var outboxRows: Int
        var updateSeconds: Double
        var requeueSeconds: Double
        var queuedBeforeDue: Bool
        var leadSeconds: Int
        /// `--profile`: the statements from the seeding's commit until the relay drained.
        var relayStatements: [Statement]? = nil
    }

    /// What a measured phase cost each process.
    struct Usage: Codable, Sendable {
        var windowSeconds: Double
        var workerCpuSeconds: [Double]
        var workerRssMB: [Double]
        var workerPeakRssMB: [Double]
        var postgresCpuSeconds: Double
        var redisCpuSeconds: Double
        var fakeFcmCpuSeconds: Double
        /// Threads that ended in between took their counts with them: never below zero.
        var workerContextSwitches: Int
        /// The workers' warn and error lines by "level: message", most frequent first.
        var workerWarnings: [Count]
        /// The Redis commands that took most of its time: calls and seconds, most first.
        var redisCommandSeconds: [RedisCommand]
        /// Pushes other than sent (retries, timeouts, refusals) by "result/reason": the usual reason for a long tail.
        var pushesNotSent: [Count]
    }

    struct Count: Codable, Sendable, Equatable {
        var name: String
        var count: Int
    }

    struct RedisCommand: Codable, Sendable, Equatable {
        var name: String
        var calls: Int
        var seconds: Double
    }

    struct Statement: Codable, Sendable {
        var calls: Int
        var totalMs: Double
        var meanMs: Double
        var planMs: Double
        var query: String
    }

    struct LedgerWrites: Codable, Sendable {
        var inserted: Int
        var updated: Int
        var hotUpdated: Int
    }

    struct Sample: Codable, Sendable {
        var percent: Double
        var dso: String
        var symbol: String
    }

    struct Burst: Codable, Sendable {
        var workers: Int
        var run: Int
        var dueSecond: Double
        var complete: Bool
        var loadAverage: Double
        var seeding: Seeding
        var expected: Int
        var accepted: Int
        var lost: Int
        var duplicated: Int
        var unexpected: Int
        var ledger: [String: Int]
        var androidExpected: Int
        var androidAccepted: Int
        var dueToLastSeconds: Double?
        var pushesPerSecond: Int?
        var latenessP50: Double?
        var latenessP99: Double?
        var usage: Usage
        var statements: [Statement]?
        var ledgerWrites: LedgerWrites?
        var workerSamples: [Sample]?
    }

    struct ReminderFanout: Codable, Sendable {
        var reminders: Int
        var dueSecond: Double
        var complete: Bool
        var loadAverage: Double
        var seeding: Seeding
        var accepted: Int
        var remindersMarkedSent: Int
        var dueToLastSeconds: Double?
        var pushesPerSecond: Int?
        var usage: Usage
        var statements: [Statement]?
        var ledgerWrites: LedgerWrites?
        var workerSamples: [Sample]?
        var acceptedPerSecond: [Int] = []
    }

    struct GiantStream: Codable, Sendable {
        var guests: Int
        var complete: Bool
        var expected: Int
        var accepted: Int
        var lost: Int
        var duplicated: Int
        var unexpected: Int
        var androidExpected: Int
        var androidAccepted: Int
        var seeding: Seeding
        var dueToLastSeconds: Double?
        var usage: Usage
    }
}
