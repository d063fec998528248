import Foundation
import Postgres

/// The fleet under steady churn for a while, with a short retention (SPEC 12.3's soak; `scripts/soak`, and a short
/// run in the end-to-end tests). Real workers (`SoakOptions.workers`), the fake FCM, a Redis of the system's own.
///
/// The churn writes as the backend would: streams created at a steady rate, each with a creator and two guests from
/// a pool of people seeded once (1-4 devices each) and two reminder subscribers; one stream in five is moved later
/// before its start window, one in ten cancelled, one in ten left to the worker's expiry, the rest set `started` a
/// few seconds after their start. Inside each start window one participant's device logs out and in again (a
/// re-registration: a backfill the ledger must deduplicate), and the creator's phones register their activities
/// (sessions, which the end reaches). The pruner deletes every stream's rows `RETENTION_DAYS` after it left
/// `scheduled`; the backend's own rows stay, as they would.
///
/// Every start accepted by the fake is checked against the eligible devices of its stream (the pool's tokens do not
/// change): missing ones are lost, repeats duplicated, starts for a cancelled stream unexpected; reminders by their
/// count per stream against the subscribers' devices with an FCM token. A stream is judged a few seconds after its
/// planned start; a repeat that comes later still counts.
public final class Soak {
    public let options: SoakOptions
    public let system: CountdownSystem
    let tally: PushTally
    /// The Countdown tables measured (read once after the migration).
    public let tables: [String]
    /// The readings so far.
    public private(set) var samples: [SoakSample] = []
    var people = People()
    var plans: [String: StreamPlan] = [:]
    var actions: [ScheduledAction] = []
    var counts = Counts()
    var interval = IntervalReadings()
    var consumed = (starts: 0, reminders: 0)
    var prunedSoFar = 0.0
    var created = 0
    var began = Date()

    /// Starts the system (migrated database, Redis of its own unless told otherwise, fake FCM), seeds the people and
    /// starts the workers.
    public init(_ options: SoakOptions, name: String = "soak") async throws {
        self.options = options
        var systemOptions = SystemOptions()
        systemOptions.name = name
        systemOptions.redis = options.ownRedis ? .own : .shared
        if let settings = options.ownPostgresSettings {
            systemOptions.postgres = .own
            systemOptions.postgresSettings = settings
        }
        systemOptions.settings = options.workerSettings
        systemOptions.latencyMilliseconds = options.latencyMilliseconds
        systemOptions.recordFlushMilliseconds = 5
        let system = try await CountdownSystem(systemOptions)
        self.system = system
        tally = PushTally(recordPath: system.fakeRecordPath)
        do {
            tables = try await system.query("""
                SELECT relname::text AS name FROM pg_class
                WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')
                  AND (starts_with(relname::text, 'countdown_') OR relname = 'live_activity_sessions')
                ORDER BY relname
                """).map { try $0.decode("name", as: String.self) }.filter { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }
            try await system.seedPeople(prefix: "p", streams: options.people)
            people = try await People.read(system)
            try await system.startWorkers(options.workers)
        } catch {
            await system.stop()
            throw error
        }
    }

    /// Runs the churn for `options.seconds`, taking a reading every `options.sampleSeconds` (`onSample` hears each);
    /// returns the verdict. The system keeps running: `stop()` it.
    public func run(onSample: (SoakSample) -> Void = { _ in }) async throws -> SoakVerdict {
        began = Date()
        var nextSample = options.sampleSeconds
        while true {
            let elapsed = Date().timeIntervalSince(began)
            while Double(created) < elapsed * options.streamsPerSecond && elapsed < options.seconds {
                created += 1
                try await createStream(created)
            }
            try await runDueActions()
            try consume()
            if elapsed >= nextSample || elapsed >= options.seconds {
                let sample = try await reading(elapsed: min(elapsed, options.seconds))
                samples.append(sample)
                onSample(sample)
                nextSample += options.sampleSeconds
                if elapsed >= options.seconds { break }
            }
            if let exited = system.workers.first(where: { !$0.isRunning }) {
                throw HarnessError("worker \(exited.index) exited with \(exited.exitStatus ?? -1) during the soak; see \(exited.logPath)")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        return SoakVerdict.judge(samples)
    }

    /// Stops the workers, the fake and the servers of its own; drops the database.
    public func stop() async {
        await system.stop()
    }
}
