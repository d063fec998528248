import Foundation
import Postgres
import Redis
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `countdown-bench system`: the whole system under a start burst and a reminder fan-out, with exact counts.
///
/// For each worker count (default 1, 2, 4) it starts that many real workers and runs start bursts: S streams
/// (default 10,000) whose T-60 falls in the same second, each with a creator and two guests holding 1-2 eligible
/// iOS devices plus ineligible ones. With the repeat worker count (default 2) it runs three bursts back to back
/// (memory must not grow), then the reminder fan-out (R active reminders on one popular stream, default 100,000)
/// and the giant stream (one stream whose start fan-out is paged). The fake FCM answers every send after a fixed
/// latency (default 30 ms). With `--android-share F` the workers run with ANDROID_COUNTDOWN=on and that share of the
/// eligible devices is Android with an FCM token instead of iOS (SPEC 10.4); their starts count with the iOS starts.
///
/// Timing: streams are inserted with a planned start a day away, the outbox relay queues their jobs, then one
/// UPDATE moves every planned start to (due second + START_LEAD_SECONDS); the due second is chosen after measuring
/// how fast the relay drains, so every start job is queued before it is due. Seeding and relaying are reported
/// separately from the burst.
///
/// It runs against the servers `scripts/bench system` started (TestEnvironment's COUNTDOWN_TEST_* variables) and the
/// executables in COUNTDOWN_SYSTEM_BIN_DIR, on TestSupport's `CountdownSystem`.
final class SystemBench {
    /// A bulk load leaves the planner without statistics until autovacuum catches up (the first burst then ran its
    /// per-stream queries 10x slower); a real database has them, so each seeding ends with ANALYZE.
    static let analyze = "ANALYZE users; ANALYZE devices; ANALYZE streams; ANALYZE stream_participants; ANALYZE stream_reminders;"

    let options: SystemBenchOptions
    let system: CountdownSystem
    let tally: PushTally
    let children: BenchChildren
    var results: SystemBenchResults
    var android: Bool { options.androidShare > 0 }
    /// The slowest relay rate measured so far (outbox rows per second): the due second's lead is chosen from it.
    var relayRowsPerSecond: Double?
    var ledgerWritesBefore: SystemBenchResults.LedgerWrites?
    /// The fleet running now.
    var fleet: [SystemWorker] = []
    let postmasterPID: Int32?
    let redisPID: Int32?

    /// Runs the benchmark; returns the exit code, or throws an error in `arguments`.
    static func main(_ arguments: [String]) async throws -> Int32 {
        let options = try SystemBenchOptions.parse(arguments)
        let children = BenchChildren.ofThisBenchmark()
        let bench: SystemBench
        do {
            bench = try await SystemBench(options, children: children)
        } catch {
            progress("error: \(error)")
            return 1
        }
        var failure: (any Error)?
        do {
            try await bench.run()
        } catch {
            failure = error
        }
        await bench.system.stop()
        if let failure {
            progress("error: \(failure)")
            return 1
        }
        FileHandle.standardOutput.write(Data(SystemBenchReport.text(bench.results, options).utf8))
        if let path = options.jsonPath {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                try encoder.encode(bench.results).write(to: URL(fileURLWithPath: path))
            } catch {
                progress("error: cannot write \(path): \(error)")
                return 1
            }
        }
        // Missed targets are findings (printed as MISS); losing or never finishing work is a failure.
        return SystemBenchReport.incomplete(bench.results) ? 1 : 0
    }

    init(_ options: SystemBenchOptions, children: BenchChildren) async throws {
        self.options = options
        self.children = children
        var systemOptions = SystemOptions()
        systemOptions.defaults = .chaos
        systemOptions.name = "bench"
        systemOptions.settings = options.workerEnvironment
        if options.androidShare > 0, systemOptions.settings["ANDROID_COUNTDOWN"] == nil { systemOptions.settings["ANDROID_COUNTDOWN"] = "on" }
        // Record lines are gathered for 5 ms (their receivedAt is still the second each message was accepted): one
        // write per message cost the fake, which shares the cores with what is measured, a tenth of its CPU.
        systemOptions.recordFlushMilliseconds = 5
        systemOptions.latencyMilliseconds = options.latencyMilliseconds
        system = try await CountdownSystem(systemOptions)
        children.record(system.fake.process.pid, executable: system.fake.process.executable)
        tally = PushTally(recordPath: system.fakeRecordPath)
        if options.profile {
            // scripts/bench system loaded the library (shared_preload_libraries) when --profile was given.
            try await system.execute("CREATE EXTENSION pg_stat_statements")
        }
        let backend = try await system.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int32.self)
        postmasterPID = ProcessUsage.parent(of: backend)
        let info = try await system.redis.command(["INFO", "server"]).string ?? ""
        redisPID = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("process_id:") }.flatMap { Int32($0.dropFirst(11)) }
        results = SystemBenchResults(
            streams: options.streams, reminders: options.reminders, latencyMs: options.latencyMilliseconds, androidShare: options.androidShare,
            cores: ProcessInfo.processInfo.activeProcessorCount)
        // Text keys compare by bytes under the C collation and through strcoll under any other: PostgreSQL's CPU per
        // push depends on it (docs/capacity.md). COUNTDOWN_PG_LOCALE picks the throwaway cluster's locale.
        results.postgresCollation = try await system.query("SELECT datcollate::text AS c FROM pg_database WHERE datname = current_database()")[0]
            .decode("c", as: String.self)
    }

    func run() async throws {
        try await seedPeople()
        for workers in options.workerCounts {
            // The previous fleet's reconcile lock (held for one interval) would make this fleet skip its startup
            // reconcile; clear it, as if the interval had passed, so every phase starts alike.
            _ = try await system.redis.command(["DEL", .init(RedisKeys(namespace: system.namespace).reconcileLock)])
            let started = Date()
            fleet = try await system.startWorkers(workers)
            for worker in fleet { children.record(worker.pid, executable: worker.process.executable) }
            // Each start runs the reconciler over every stream that may need a job; measured, and not mixed into the bursts.
            try await waitUntil(timeout: .seconds(900), every: .milliseconds(500), "the startup reconcile") { self.reconciled() }
            let streams = try await count("SELECT count(*) AS n FROM streams")
            let seconds = Date().timeIntervalSince(started)
            results.startupReconcile.append(.init(workers: workers, streams: streams, seconds: SystemBenchReport.rounded(seconds, 1)))
            progress("\(workers) workers started; startup reconcile over \(streams) streams took \(String(format: "%.1f", seconds))s")
            let repeated = workers == options.repeatWorkers
            for run in 1...(repeated ? max(options.repeatCount, 1) : 1) {
                try await burst(workers: workers, run: run)
            }
            if repeated, options.reminders > 0 { try await reminderFanout() }
            if repeated, options.giantGuests > 0 { try await giantStream() }
            results.workerExits[String(workers)] = await system.stopWorkers()
            fleet = []
        }
    }

    // MARK: Helpers

    func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> Int {
        try await system.query(sql, parameters)[0].decode("n", as: Int.self)
    }

    func reconciled() -> Bool {
        fleet.contains { worker in
            worker.logLines().contains { ["reconciler found the queue consistent", "reconciler repaired the queue"].contains($0["msg"] as? String ?? "") }
        }
    }

    func snapshot() async throws -> SystemBenchSnapshot {
        try await SystemBenchSnapshot.take(
            workers: fleet, fakePID: system.fake.process.pid, postmasterPID: postmasterPID, redisPID: redisPID, redis: system.redis)
    }

    /// Polls `condition` every `every` until it holds: true, or false after `timeout` seconds (logged).
    static func waitCompleted(_ what: String, timeout: Int, _ condition: () async throws -> Bool) async throws -> Bool {
        do {
            try await waitUntil(timeout: .seconds(timeout), every: .milliseconds(250), what, condition)
            return true
        } catch let error as WaitTimedOut {
            progress(error.description)
            return false
        }
    }

    static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) > 0 ? SystemBenchReport.rounded(loads[0], 1) : 0
    }

    /// HH:MM:SS of an epoch second, local time.
    static func clock(_ epoch: Double) -> String {
        var time = time_t(epoch)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

/// A progress line on stderr (the report goes to stdout).
func progress(_ message: String) {
    FileHandle.standardError.write(Data("  \(SystemBench.clock(Date().timeIntervalSince1970)) \(message)\n".utf8))
}
