import Foundation
import Testing
import TestSupport

extension ChaosScenario {
    /// Runs scenario `number`: builds its system (`.chaos` defaults, database and log directory `chaos<N>`, the
    /// fake's request log on, a latency fault of `latencyMilliseconds` when > 0; `options` adjusts the rest), runs
    /// `body`, computes the result (`result`; `body` may return the set to compare instead of `expected`), prints
    /// its summary, appends it to `$COUNTDOWN_CHAOS_REPORT` when set, keeps the logs of a failed scenario, stops the
    /// system, and records a test failure naming the failed checks. A thrown error is a failed check ("harness: …").
    public static func run(
        number: Int, title: String, settings: [String: String] = [:], latencyMilliseconds: Int = 30,
        options adjust: (inout SystemOptions) -> Void = { _ in }, _ body: (ChaosScenario) async throws -> Set<StartKey>?
    ) async throws {
        let started = Date()
        var options = SystemOptions()
        options.defaults = .chaos
        options.settings = settings
        options.name = "chaos\(number)"
        options.fakeDebug = true
        options.latencyMilliseconds = latencyMilliseconds
        adjust(&options)
        log("scenario \(number): \(title)")
        let system: CountdownSystem
        do {
            system = try await CountdownSystem(options)
        } catch {
            let result = ChaosResult(
                number: number, title: title, counts: StartComparison.compare([], []), duplicateBound: 0, duplicateBoundText: "0",
                checks: [.init(passed: false, text: "harness: could not start the system: \(error)")], details: [],
                seconds: Date().timeIntervalSince(started))
            finish(result)
            return
        }
        let scenario = ChaosScenario(system: system, number: number, title: title, settings: system.settings, started: started)
        var compareWith: Set<StartKey>?
        do {
            compareWith = try await body(scenario)
        } catch {
            scenario.check(false, "harness: \(error)")
        }
        var result = await scenario.result(expected: compareWith)
        if !result.passed {
            result.logs = scenario.keepLogs()
            if let logs = result.logs { result.details.append("logs kept in \(logs)") }
        }
        await system.stop()
        finish(result)
    }

    /// Logs, prints and reports `result`, then records a test failure unless it passed.
    static func finish(_ result: ChaosResult) {
        log("scenario \(result.number): \(result.passed ? "pass" : "FAIL") (lost \(result.lost), duplicated \(result.duplicated), "
            + "unexpected \(result.unexpected), \(fixed(result.seconds, 1))s)")
        print("\n" + result.summary)
        do {
            try appendToReport(result)
        } catch {
            Issue.record("could not write the chaos report: \(error)")
        }
        #expect(result.passed, "scenario \(result.number) (\(result.title)) failed: \(result.failures)")
    }

    /// The verdict as chaos.py's `result()`: the scenario's own counts, or the accepted starts compared with
    /// `expected` (or `self.expected`); the lateness against the due second and the ledger's statuses are noted.
    /// A failure while reading is a failed check.
    public func result(expected compareWith: Set<StartKey>? = nil) async -> ChaosResult {
        var comparison = counts
        do {
            if comparison == nil { comparison = StartComparison.compare(compareWith ?? expected, try acceptedKeys()) }
            if let due {
                let lateness = try tally.refresh().startTimes(prefix: prefix).map { $0 - due }
                if let first = lateness.min(), let last = lateness.max() {
                    note("start lateness against the due second: min \(Self.signed(first, 2))s, p50 \(Self.fixed(percentile(lateness, 0.5), 2))s, "
                         + "max \(Self.fixed(last, 2))s")
                }
            }
            let ledger = try await system.ledgerCounts(streamPrefix: prefix).byStatus
            note("ledger: " + ledger.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        } catch {
            check(false, "harness: \(error)")
        }
        let counted = comparison ?? StartComparison.compare(compareWith ?? expected, [])
        return ChaosResult(
            number: number, title: title, counts: counted, duplicateBound: duplicateBound, duplicateBoundText: duplicateBoundText,
            checks: checks.map { ChaosResult.Check(passed: $0.passed, text: $0.text) }, details: details,
            seconds: Date().timeIntervalSince(started))
    }

    /// Copies the system's directory (worker logs, the fake's log and record file) to
    /// `/tmp/countdown-chaos-<run>/scenario-<N>`; the path, or nil when the copy failed.
    func keepLogs() -> String? {
        let target = "/tmp/countdown-chaos-\(Self.runStamp)/scenario-\(number)"
        do {
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: system.directory, toPath: target)
            return target
        } catch {
            note("could not keep the logs in \(target): \(error)")
            return nil
        }
    }

    /// This run's time (`yyyyMMdd-HHmmss`, UTC), shared by the scenarios that keep their logs.
    static let runStamp: String = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: Date())
    }()

    /// Appends the result as one JSON line to `$COUNTDOWN_CHAOS_REPORT` (scripts/chaos prints its table from it).
    static func appendToReport(_ result: ChaosResult) throws {
        guard let path = ProcessInfo.processInfo.environment["COUNTDOWN_CHAOS_REPORT"], !path.isEmpty else { return }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw ReportUnwritable(path: path) }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ReportUnwritable(path: path) }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((try result.reportLine() + "\n").utf8))
    }

    /// A progress line on stderr, as the scenarios go (`  HH:MM:SS message`).
    static func log(_ message: String) {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss"
        let clock = formatter.string(from: Date())
        FileHandle.standardError.write(Data("  \(clock) \(message)\n".utf8))
    }
}

/// The report file named by `COUNTDOWN_CHAOS_REPORT` could not be opened for appending.
struct ReportUnwritable: Error, CustomStringConvertible {
    let path: String
    var description: String { "cannot append to \(path)" }
}
