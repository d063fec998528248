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
    var bursts: [Phase] = []
    var reminderFanout: Phase?
    var giantStream: Phase?
    /// Exit statuses of each fleet on SIGTERM, by its worker count (nil: still running after the timeout).
    var workerExits: [String: [Int32?]] = [:]

    /// The measured phases in the order they ran, each with its name in the report (the reminder fan-out's is
    /// `reminders`); the giant stream only with `giant`.
    func phases(reminders: String, giant: Bool = true) -> [(name: String, phase: Phase)] {
        bursts.map { ($0.burstName, $0) } + (reminderFanout.map { [(reminders, $0)] } ?? [])
            + (giant ? giantStream.map { [("giant stream", $0)] } ?? [] : [])
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

    /// One measured phase: a start burst, the reminder fan-out or the giant stream. The reminder fan-out counts
    /// reminders where the others count starts; what a phase does not measure keeps its default.
    struct Phase: Codable, Sendable {
        /// The fleet's worker count, and which of its bursts this is (1 for the other phases).
        var workers: Int
        var run: Int
        var dueSecond: Double
        var complete: Bool
        var loadAverage: Double
        var seeding: Seeding
        /// The pushes due: (stream, device) starts by the contract tables, or active reminders.
        var expected: Int
        var accepted: Int
        var lost = 0
        var duplicated = 0
        var unexpected = 0
        /// The start ledger's rows by status once it settled.
        var ledger: [String: Int] = [:]
        var androidExpected = 0
        var androidAccepted = 0
        var dueToLastSeconds: Double?
        var pushesPerSecond: Int?
        var latenessP50: Double?
        var latenessP99: Double?
        var usage: Usage
        var statements: [Statement]?
        var ledgerWrites: LedgerWrites?
        var workerSamples: [Sample]?
        /// The reminder fan-out's reminders marked sent.
        var remindersMarkedSent: Int?
        /// Pushes accepted in each second after due (the reminder fan-out).
        var acceptedPerSecond: [Int] = []

        /// Its name in the report: `burst w2r1`.
        var burstName: String { "burst w\(workers)r\(run)" }
    }
}
