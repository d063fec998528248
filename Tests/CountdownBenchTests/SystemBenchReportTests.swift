@testable import countdown_bench
import Foundation
import Testing

/// The report prints what scripts/lib/bench_system.py printed for the same figures, so docs/benchmarks.md's tables
/// stay comparable: the expected text below is the Python report's own output for this fixture.
@Suite struct SystemBenchReportTests {
    typealias Results = SystemBenchResults

    static func usage(
        _ cpu: [Double], _ rss: [Double], _ peak: [Double], _ postgres: Double, _ redis: Double, _ fake: Double, _ switches: Int,
        warnings: [Results.Count] = [], redisCommands: [Results.RedisCommand] = [], notSent: [Results.Count] = []
    ) -> Results.Usage {
        Results.Usage(
            windowSeconds: 12.5, workerCpuSeconds: cpu, workerRssMB: rss, workerPeakRssMB: peak, postgresCpuSeconds: postgres,
            redisCpuSeconds: redis, fakeFcmCpuSeconds: fake, workerContextSwitches: switches, workerWarnings: warnings,
            redisCommandSeconds: redisCommands, pushesNotSent: notSent)
    }

    static let seeding = Results.Seeding(
        insertSeconds: 2.21, relaySeconds: 1.4, relayRowsPerSecond: 28552, outboxRows: 40000, updateSeconds: 0.5, requeueSeconds: 0.9,
        queuedBeforeDue: true, leadSeconds: 6)
    static let statements = [Results.Statement(calls: 313, totalMs: 2131, meanMs: 6.81, planMs: 1, query: "INSERT INTO countdown_start_ledger")]

    static func burst(
        _ workers: Int, _ run: Int, last: Double?, rate: Int?, p50: Double, p99: Double, _ usage: Results.Usage, lost: Int = 0,
        statements: [Results.Statement]? = nil, writes: Results.LedgerWrites? = nil
    ) -> Results.Phase {
        Results.Phase(
            workers: workers, run: run, dueSecond: 1000, complete: true, loadAverage: 2.2, seeding: seeding, expected: 45000, accepted: 45000,
            lost: lost, duplicated: 0, unexpected: 0, ledger: [:], androidExpected: 22608, androidAccepted: 22600, dueToLastSeconds: last,
            pushesPerSecond: rate, latenessP50: p50, latenessP99: p99, usage: usage, statements: statements, ledgerWrites: writes,
            workerSamples: nil)
    }

    static func fixture() -> Results {
        var results = Results(streams: 10000, reminders: 100_000, latencyMs: 30, androidShare: 0.5, cores: 2)
        results.postgresCollation = "C.UTF-8"
        results.seedPeople = .init(seconds: 3.25, users: 30000, devices: 61000)
        results.startupReconcile = [.init(workers: 1, streams: 0, seconds: 0.1), .init(workers: 2, streams: 10000, seconds: 1.6)]
        results.bursts = [
            burst(1, 1, last: 10.9, rate: 4128, p50: 5.1, p99: 10.8,
                  usage([4.05], [46.4], [50.0], 1.89, 0.31, 3.96, 90000, warnings: [.init(name: "warn: push retried", count: 3)],
                        notSent: [.init(name: "retry/unavailable", count: 2)]),
                  statements: statements, writes: .init(inserted: 45000, updated: 90000, hotUpdated: 81000)),
            burst(2, 1, last: 6.69, rate: 6726, p50: 3.3, p99: 6.6, usage([1.9, 1.97], [46.7, 47.5], [55.0, 56.1], 1.85, 0.3, 3.87, 45000)),
            burst(2, 2, last: 6.52, rate: 6902, p50: 3.2, p99: 6.5, usage([1.85, 1.9], [46.9, 48.7], [55.2, 56.3], 1.8, 0.29, 3.78, 44000)),
        ]
        results.reminderFanout = Results.Phase(
            workers: 2, run: 1, dueSecond: 2000, complete: true, loadAverage: 3.1, seeding: seeding, expected: 100_000, accepted: 100_000,
            dueToLastSeconds: 9.24, pushesPerSecond: 10823,
            usage: usage([2.61, 2.9], [50.1, 51.2], [52.0, 53.0], 1.8, 1.18, 7.5, 120_000,
                         redisCommands: [.init(name: "evalsha", calls: 2000, seconds: 0.81), .init(name: "zadd", calls: 100, seconds: 0.05)]),
            statements: statements, ledgerWrites: nil, workerSamples: nil, remindersMarkedSent: 100_000, acceptedPerSecond: [0, 9000, 10000, 1000])
        results.giantStream = Results.Phase(
            workers: 2, run: 1, dueSecond: 3000, complete: true, loadAverage: 2.5, seeding: seeding, expected: 20002, accepted: 20002,
            androidExpected: 10148, androidAccepted: 10148, dueToLastSeconds: 5.06,
            usage: usage([1.1, 1.2], [48.0, 49.0], [57.4, 56.0], 0.8, 0.1, 1.7, 2000))
        results.workerExits = ["1": [0], "2": [0, 0]]
        return results
    }

    static func options() throws -> SystemBenchOptions {
        try SystemBenchOptions.parse(["--android-share", "0.5", "--profile"])
    }

    @Test func printsThePythonReportsLayout() throws {
        #expect(SystemBenchReport.text(Self.fixture(), try Self.options()) == Self.expected)
    }

    @Test func writesEveryPhaseInOneShape() throws {
        let object = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(Self.fixture())) as? [String: Any]
        let phases = [(object?["bursts"] as? [Any])?.first, object?["reminderFanout"], object?["giantStream"]]
        for phase in phases {
            let keys = Set((phase as? [String: Any] ?? [:]).keys)
            #expect(keys.isSuperset(of: ["workers", "run", "dueSecond", "expected", "accepted", "lost", "duplicated", "seeding", "usage"]))
        }
    }

    @Test func judgesTheTargets() throws {
        var results = Self.fixture()
        #expect(SystemBenchReport.verdicts(results, try Self.options()).allSatisfy { $0.passed == true })
        #expect(!SystemBenchReport.incomplete(results))
        results.bursts[2].dueToLastSeconds = 15.5
        results.bursts[2].usage.workerRssMB = [46.9, 53.0]
        results.bursts[1].lost = 1
        results.workerExits["2"] = [0, nil]
        let missed = SystemBenchReport.verdicts(results, try Self.options()).filter { $0.passed == false }.map(\.name)
        #expect(missed == ["10000 streams' starts within 15s with 2 workers", "no growth across 2 back-to-back runs", "workers exit 0 on SIGTERM"])
        #expect(SystemBenchReport.incomplete(results))
    }

    @Test func judgesTheRelayAndTheReminderCost() throws {
        var results = Self.fixture()
        results.bursts[2].seeding.relaySeconds = 2.2
        results.reminderFanout?.seeding.relayRowsPerSecond = 4400
        results.reminderFanout?.usage.postgresCpuSeconds = 3.8
        let verdicts = SystemBenchReport.verdicts(results, try Self.options())
        let missed = verdicts.filter { $0.passed == false }.map { "\($0.name): \($0.detail)" }
        #expect(missed == [
            "40000 reminder rows relayed at >= 25000 rows/s: 4400 rows/s (1.4s; was 4.4k rows/s at 1ec4353)",
            "later bursts' relay within 1.5x of the first's: 1.4 -> 2.2 s for 40000 rows each (was 0.40 s -> 3.24 s at 1ec4353)",
            "reminder fan-out PostgreSQL CPU <= 20 µs per push: 38 µs (the fake FCM's, the machine-speed reference: 75 µs; was 38 µs at 1ec4353)",
        ])
        results.bursts[2].seeding.relaySeconds = 2.0
        #expect(SystemBenchReport.relayVerdicts(results, try Self.options()).last?.passed == true, "within 1.5x")
    }

    @Test func printsTheRelaysStatementsWhenProfiled() throws {
        var results = Self.fixture()
        results.bursts[1].seeding.relayStatements = [.init(calls: 80, totalMs: 420, meanMs: 5.25, planMs: 3, query: "SELECT id FROM countdown_outbox")]
        let text = SystemBenchReport.text(results, try Self.options())
        #expect(text.contains("""
            statements by total time (relay of burst w2r1, 40000 rows in 1.4s):
                  420 ms exec      3 ms plan     80 calls  5.25 ms  SELECT id FROM countdown_outbox
            """))
        #expect(!text.contains("relay of burst w1r1"), "a phase without figures prints no section")
    }

    @Test func judgesNoCostOnASmallBurst() throws {
        var options = try Self.options()
        options.streams = 100
        let cost = SystemBenchReport.verdicts(Self.fixture(), options).filter { $0.name.hasPrefix("CPU per push") }
        #expect(cost.count == 1 && cost[0].passed == nil && cost[0].detail == "worker 86 µs, PostgreSQL 41 µs")
    }

    @Test func formatsFiguresAsPythonPrintedThem() {
        #expect(SystemBenchReport.py(1.0) == "1.0")
        #expect(SystemBenchReport.py(10.59) == "10.59")
        #expect(SystemBenchReport.py(nil as Double?) == "None")
        #expect(SystemBenchReport.py(Double.infinity) == "inf")
        #expect(SystemBenchReport.py(15, integral: true) == "15")
        #expect(SystemBenchReport.rounded(2.675001, 2) == 2.68)
        #expect(SystemBenchReport.perSecond([999.5, 1000.2, 1000.9, 1002.1], due: 1000) == [2, 0, 1])
        #expect(SystemBenchReport.perSecond([], due: 1000) == [])
    }

    static let expected = """

        scripts/bench system: 10000 streams per burst, fake FCM latency 30 ms, 2 cores, PostgreSQL collation C.UTF-8
        Android share 0.5 of the eligible devices (ANDROID_COUNTDOWN=on): Android countdown starts accepted/expected per burst: w1r1 22600/22608 of 45000, w2r1 22600/22608 of 45000, w2r2 22600/22608 of 45000
        seeding people: 30000 users, 61000 devices in 3.25s
        workers started (1): startup reconcile over 0 streams took 0.1s
        workers started (2): startup reconcile over 10000 streams took 1.6s

        | workers | run | load | seed s | relay s (rows/s) | starts | due→last s | pushes/s | lateness p50/p99 s | lost/dup/unexp | worker RSS MB | worker CPU s | PG CPU s | Redis CPU s | fake CPU s | worker µs/push | PG µs/push | worker switches/push |
        |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
        | 1 | 1 | 2.2 | 2.21 | 1.4 (28552) | 45000/45000 | 10.9 | 4128 | 5.1 / 10.8 | 0/0/0 | 46.4 | 4.05 | 1.89 | 0.31 | 3.96 | 90 | 42 | 2.0 |
        | 2 | 1 | 2.2 | 2.21 | 1.4 (28552) | 45000/45000 | 6.69 | 6726 | 3.3 / 6.6 | 0/0/0 | 46.7+47.5 | 1.9+1.97 | 1.85 | 0.3 | 3.87 | 86 | 41 | 1.0 |
        | 2 | 2 | 2.2 | 2.21 | 1.4 (28552) | 45000/45000 | 6.52 | 6902 | 3.2 / 6.5 | 0/0/0 | 46.9+48.7 | 1.85+1.9 | 1.8 | 0.29 | 3.78 | 83 | 40 | 0.98 |

        machine-speed reference, the fake FCM's CPU per push (the same code in every run; the worker's and PostgreSQL's CPU per push as multiples of it compare across runs at different machine speeds): w1r1 88 µs (worker ×1.02, PostgreSQL ×0.48); w2r1 86 µs (worker ×1.0, PostgreSQL ×0.48); w2r2 84 µs (worker ×0.99, PostgreSQL ×0.48)

        worker warnings and errors by phase: burst w1r1: warn: push retried ×3, pushes retry/unavailable ×2

        relay rows/s by phase: burst w1r1 28552 rows/s (40000 rows in 1.4s), burst w2r1 28552 rows/s (40000 rows in 1.4s), burst w2r2 28552 rows/s (40000 rows in 1.4s), reminders 28552 rows/s (40000 rows in 1.4s), giant stream 28552 rows/s (40000 rows in 1.4s)

        scaling (pushes/s relative to 1 worker): 1 workers ×1.0, 2 workers ×1.63

        reminder fan-out: 100000/100000 accepted, 100000 marked sent, due→last 9.24s (10823/s), load 3.1; seeding 2.21s, relay 1.4s (28552 rows/s); worker RSS 50.1+51.2 MB, worker CPU 2.61+2.9s, PG CPU 1.8s, Redis CPU 1.18s; per push: worker 55 µs, PG 18 µs, worker switches 1.2, fake FCM CPU 7.5s
        accepted per second after due: 0 9000 10000 1000
        Redis time by command: evalsha 2000 calls 0.81s, zadd 100 calls 0.05s

        giant stream: 20002/20002 starts of one stream (10148 Android), due→last 5.06s, lost 0, duplicated 0; worker CPU 1.1+1.2s, PG CPU 0.8s

        statements by total time (burst w1r1):
             2131 ms exec      1 ms plan    313 calls  6.81 ms  INSERT INTO countdown_start_ledger
          start ledger: 45000 rows inserted, 90000 updated, 90 % of the updates HOT

        statements by total time (reminder fan-out):
             2131 ms exec      1 ms plan    313 calls  6.81 ms  INSERT INTO countdown_start_ledger

        targets:
          PASS  10000 streams' starts within 15s with 2 workers: worst 6.69s, lost 0
          PASS  worker CPU <= 100 µs per push: worst run 86 µs (the fake FCM's CPU per push, the machine-speed reference: 86/84 µs)
          PASS  PostgreSQL CPU <= 50 µs per push: worst run 41 µs (the fake FCM's CPU per push, the machine-speed reference: 86/84 µs)
          PASS  40000 reminder rows relayed at >= 25000 rows/s: 28552 rows/s (1.4s; was 4.4k rows/s at 1ec4353)
          PASS  later bursts' relay within 1.5x of the first's: 1.4 -> 1.4 s for 40000 rows each (was 0.40 s -> 3.24 s at 1ec4353)
          PASS  100000 reminders within 12s: 9.24s
          PASS  reminder fan-out PostgreSQL CPU <= 20 µs per push: 18 µs (the fake FCM's, the machine-speed reference: 75 µs; was 38 µs at 1ec4353)
          PASS  every worker takes part in the reminder fan-out: worker CPU 2.61+2.9 s
          PASS  one stream with 20002 eligible devices within 15s, none twice: 5.06s, lost 0, duplicated 0
          PASS  worker RSS <= 150 MB: peak 56.3 MB
          PASS  no growth across 2 back-to-back runs: 47.5 -> 48.7 MB
          PASS  workers exit 0 on SIGTERM: exit codes [0, 0, 0]

        """
}
