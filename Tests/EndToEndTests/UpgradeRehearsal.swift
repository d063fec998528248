import Foundation
import TestSupport

/// The state of one upgrade rehearsal (scripts/rehearse-upgrade, docs/upgrading.md): a system whose workers and
/// `countdown-admin` come from an older build (`COUNTDOWN_OLD_BIN_DIR`) or this one, the starts PostgreSQL asked
/// for across its waves of streams, and the checks made on the way.
final class UpgradeRehearsal: @unchecked Sendable {
    /// The older build's directory (its `countdown-worker` and `countdown-admin`); nil outside scripts/rehearse-upgrade.
    static var oldBinDirectory: URL? {
        ProcessInfo.processInfo.environment["COUNTDOWN_OLD_BIN_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
    }

    static let prefix = "up."
    static let people = "upp"

    let system: CountdownSystem
    let tally: PushTally
    let started = Date()
    private(set) var expected: Set<StartKey> = []
    private(set) var checks: [(passed: Bool, text: String)] = []
    private(set) var notes: [String] = []

    /// A system of its own PostgreSQL (`synchronous_commit=on`), left unmigrated: the old build's
    /// `countdown-admin migrate` gives it the old schema.
    init(old: URL) async throws {
        var options = SystemOptions()
        options.defaults = .chaos
        options.settings = ["WORKER_CONCURRENCY": "16", "SHUTDOWN_GRACE_SECONDS": "10"]
        options.postgres = .own
        options.name = "rehearse"
        options.fakeDebug = true
        options.latencyMilliseconds = 30
        options.migrate = false
        system = try await CountdownSystem(options)
        tally = PushTally(recordPath: system.fakeRecordPath)
        use(old)
        let (status, output) = try await system.admin(["migrate"])
        guard status == 0 else {
            await system.stop()
            throw HarnessError("the old build's countdown-admin migrate exited \(status): \(output)")
        }
    }

    /// Workers and admin commands started from now on come from `build`.
    func use(_ build: URL) { system.binDirectory = build }

    func check(_ passed: Bool, _ text: String) { checks.append((passed, text)) }

    func note(_ text: String) { notes.append(text) }

    func log(_ text: String) {
        let stamp = Date().formatted(.dateTime.hour(.twoDigits(amPM: .omitted)).minute(.twoDigits).second(.twoDigits))
        FileHandle.standardError.write(Data("  \(stamp) \(text)\n".utf8))
    }

    /// People and `streams` streams of wave `wave` whose start window opens `dueIn` seconds from the database's now;
    /// adds their starts to `expected` and returns the due second.
    func seedWave(_ wave: Int, streams: Int, dueIn: Int) async throws -> Double {
        let people = "\(Self.people)\(wave)w"
        let prefix = "\(Self.prefix)\(wave)."
        try await system.seedPeople(prefix: people, streams: streams, tokenBase: wave * 100_000)
        let due = (try await system.databaseNow()).rounded(.down) + Double(dueIn)
        try await system.seedStreams(peoplePrefix: people, streamPrefix: prefix, count: streams, plannedAtEpoch: due + Double(system.startLead))
        expected.formUnion(try await system.expectedStarts(streamPrefix: prefix))
        return due
    }

    /// Sleeps until the wall clock reaches `epoch`.
    func waitUntil(_ epoch: Double) async throws {
        let seconds = epoch - Date().timeIntervalSince1970
        if seconds > 0 { try await Task.sleep(for: .milliseconds(Int(seconds * 1000))) }
    }

    /// SIGTERM to each worker a second apart, as a rolling update does; each must drain and exit 0.
    func stopOneAtATime(_ workers: [SystemWorker], _ text: (_ index: Int, _ status: Int32?) -> String) async throws {
        let grace = TimeInterval(system.settings["SHUTDOWN_GRACE_SECONDS"].flatMap(Int.init) ?? 10)
        for worker in workers {
            try await Task.sleep(for: .seconds(1))
            worker.terminate()
            let status = await worker.waitForExit(timeout: grace + 10)
            check(status == 0, text(worker.index, status))
            system.retire(worker)
        }
    }

    /// Whether every worker's `/readyz` answers 200 now.
    func allReady(_ workers: [SystemWorker]) async -> Bool {
        for worker in workers where await worker.readiness().status != 200 { return false }
        return true
    }

    /// Waits (up to `timeout` seconds) until every worker's `/readyz` answers 200.
    func waitReady(_ workers: [SystemWorker], timeout: Int, _ what: String) async throws {
        try await TestSupport.waitUntil(timeout: .seconds(timeout), every: .milliseconds(200), what) { await self.allReady(workers) }
    }

    /// Waits until nothing is open for the rehearsal's streams; a failed check when `timeout` passes first.
    func waitQuiet(after due: Double?, timeout: Double) async throws {
        if let due { try await waitUntil(due + 0.5) }
        let open = try await system.waitQuiet(streamPrefix: Self.prefix, tally: tally, timeout: timeout)
        if !open.isEmpty { check(false, "quiet within \(Int(timeout))s (still: \(open.joined(separator: ", ")))") }
    }

    func schemaVersions() async throws -> [Int] {
        try await system.query("SELECT version FROM countdown_schema_migrations ORDER BY version").map { try $0.decode("version") }
    }

    /// `<build>/countdown-worker --version`, or a note that the build predates the flag.
    func version(of build: URL) async -> String {
        let executable = build.appendingPathComponent("countdown-worker").path
        let answer = try? await offThePool { try runProcess(executable, ["--version"], timeout: 30) }
        guard let answer, answer.status == 0 else { return "(no --version: older than the flag)" }
        return answer.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The starts the fake accepted against `expected`; whether the rehearsal passed. Logs the details and checks
    /// and prints the summary as one JSON line on stdout (what scripts/rehearse-upgrade printed before).
    func finish() async throws -> (passed: Bool, failures: [String]) {
        let counts = StartComparison.compare(expected, try tally.refresh().startKeys(prefix: Self.prefix))
        let ledger = try await system.ledgerCounts(streamPrefix: Self.prefix)
        note("ledger: " + ledger.byStatus.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let failures = checks.filter { !$0.passed }.map(\.text)
            + (counts.lost > 0 ? ["\(counts.lost) starts lost"] : []) + (counts.duplicated > 0 ? ["\(counts.duplicated) starts duplicated"] : [])
            + (counts.unexpected > 0 ? ["\(counts.unexpected) starts unexpected"] : [])
        let passed = failures.isEmpty
        let seconds = (Date().timeIntervalSince(started) * 10).rounded() / 10
        for text in notes { log(text) }
        for check in checks { log((check.passed ? "ok   " : "FAIL ") + check.text) }
        log("starts: expected \(counts.expected), accepted \(counts.accepted), lost \(counts.lost), duplicated \(counts.duplicated), "
            + "unexpected \(counts.unexpected) (\(seconds)s)")
        let summary: [String: Any] = [
            "expected": counts.expected, "accepted": counts.accepted, "lost": counts.lost, "duplicated": counts.duplicated,
            "unexpected": counts.unexpected, "passed": passed, "seconds": seconds,
        ]
        let line = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        print(String(decoding: line, as: UTF8.self))
        return (passed, failures)
    }
}
