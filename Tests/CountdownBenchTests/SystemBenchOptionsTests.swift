@testable import countdown_bench
import Testing

@Suite struct SystemBenchOptionsTests {
    @Test func defaultsAreThePythonHarnesss() throws {
        let options = try SystemBenchOptions.parse([])
        #expect(options == SystemBenchOptions())
        #expect(options.streams == 10_000 && options.reminders == 100_000 && options.workerCounts == [1, 2, 4])
        #expect(options.giantGuests == 10_000 && options.repeatCount == 3 && options.repeatWorkers == 2 && options.latencyMilliseconds == 30)
        #expect(options.androidShare == 0 && !options.profile && options.perfDirectory == nil && options.jsonPath == nil)
    }

    @Test func readsEveryOption() throws {
        let options = try SystemBenchOptions.parse([
            "--streams", "2000", "--reminders", "0", "--workers", "2,4,", "--giant-guests", "5", "--repeat", "2", "--repeat-workers", "4",
            "--latency-ms", "10", "--android-share", "0.25", "--worker-env", "A=1", "--worker-env", "B=x=y", "--worker-env", "A=2",
            "--profile", "--perf", "/tmp/p", "--json", "/tmp/r.json", "--skip-build", "--debug",
        ])
        #expect(options.streams == 2000 && options.reminders == 0 && options.workerCounts == [2, 4] && options.giantGuests == 5)
        #expect(options.repeatCount == 2 && options.repeatWorkers == 4 && options.latencyMilliseconds == 10 && options.androidShare == 0.25)
        #expect(options.workerEnvironment == ["A": "2", "B": "x=y"])
        #expect(options.profile && options.perfDirectory == "/tmp/p" && options.jsonPath == "/tmp/r.json")
    }

    @Test(arguments: [
        ["--streams", "0"], ["--workers", "1,0"], ["--workers", "1,x"], ["--android-share", "1.5"], ["--android-share", "-0.1"],
        ["--worker-env", "NOEQUALS"], ["--worker-env", "=x"], ["--streams"], ["--streams", "ten"], ["--bogus"],
    ])
    func refusesBadArguments(arguments: [String]) {
        #expect(throws: BenchError.self) { try SystemBenchOptions.parse(arguments) }
    }
}
