@testable import countdown_bench
import Testing

@Suite struct BenchmarksTests {
    /// `--help` or `-h` prints a benchmark's usage (exit 0) before anything reads its arguments, a bad one included.
    @Test(arguments: ["queue", "push", "system", "soak", "broadcast"])
    func helpAnswersBeforeTheArgumentsAreRead(_ name: String) async {
        #expect(Benchmarks.all[name]?.usage.hasPrefix("usage: ") == true)
        #expect(await Benchmarks.main([name, "--bogus", "--help"]) == 0)
        #expect(await Benchmarks.main([name, "-h"]) == 0)
    }

    /// A bad argument is a usage error (2), found before the benchmark starts anything.
    @Test(arguments: [
        ["queue"], ["queue", "enqueue"], ["push", "--fake", "http://127.0.0.1:1", "--account", "a.json", "--count", "0"], ["push", "--json"],
        ["system", "--streams", "0"], ["system", "--bogus"], ["soak", "--minutes", "0"], ["soak", "--rate", "x"], ["broadcast", "--subscribers", "-1"],
    ])
    func aBadArgumentIsAUsageError(_ arguments: [String]) async {
        #expect(await Benchmarks.main(arguments) == 2)
    }

    @Test func noKnownBenchmarkIsAUsageError() async {
        #expect(await Benchmarks.main(["bogus"]) == 2)
        #expect(await Benchmarks.main([]) == 2)
        #expect(await Benchmarks.main(["help"]) == 0)
        #expect(await Benchmarks.main(["--help"]) == 0)
    }
}
