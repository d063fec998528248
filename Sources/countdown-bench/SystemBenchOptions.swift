import Foundation

/// The options of `countdown-bench system` (what `scripts/bench system` passes through), with its defaults.
struct SystemBenchOptions: Sendable, Equatable {
    var streams = 10_000
    var reminders = 100_000
    var workerCounts = [1, 2, 4]
    var giantGuests = 10_000
    var repeatCount = 3
    var repeatWorkers = 2
    var latencyMilliseconds = 30
    var androidShare = 0.0
    /// `--worker-env NAME=VALUE`, in order (a later one wins).
    var workerEnvironment: [String: String] = [:]
    var profile = false
    var perfDirectory: String?
    var jsonPath: String?

    static let usage = """
        usage: scripts/bench system [--streams N] [--reminders N] [--workers LIST] [--giant-guests N] [--repeat N]
                                    [--repeat-workers N] [--latency-ms MS] [--android-share F] [--worker-env NAME=VALUE]
                                    [--profile] [--perf DIR] [--json FILE] [--skip-build]

        The whole system (PostgreSQL, Redis, countdown-fake-fcm, N workers) under a start burst and a reminder fan-out.

          --streams N              streams per burst (default 10000)
          --reminders N            active reminders on the popular stream (default 100000; 0 skips)
          --workers LIST           worker counts to run, comma-separated (default 1,2,4)
          --giant-guests N         guests (two eligible devices each) of the one giant stream (default 10000: 20,002 starts; 0 skips)
          --repeat N               back-to-back bursts with the repeat worker count (default 3)
          --repeat-workers N       worker count for repeated bursts and reminders (default 2)
          --latency-ms MS          fake FCM answer latency (default 30)
          --android-share F        share (0-1) of the eligible devices that are Android, with ANDROID_COUNTDOWN=on
                                   (default 0: iOS only, the flag off)
          --worker-env NAME=VALUE  extra worker environment (repeatable)
          --profile                pg_stat_statements: print the statements that dominate each burst
          --perf DIR               sample the workers' CPU with `perf record -e cpu-clock` in each measured phase, print the
                                   functions that dominate and keep the full reports in DIR (needs perf)
          --json FILE              also write the results as JSON
          --skip-build             (scripts/bench system) reuse the last release build
        """

    /// Parses the arguments after `system`; `--debug` and `--skip-build` belong to the shell and are ignored here.
    static func parse(_ arguments: [String]) throws -> SystemBenchOptions {
        let given = try BenchOptions(
            arguments, flags: ["profile", "debug", "skip-build"],
            known: ["streams", "reminders", "giant-guests", "repeat", "repeat-workers", "latency-ms", "workers", "android-share", "worker-env", "perf", "json"])
        var options = SystemBenchOptions()
        options.profile = given.has("profile")
        options.streams = try given.int("streams", default: options.streams)
        options.reminders = try given.int("reminders", default: options.reminders)
        options.giantGuests = try given.int("giant-guests", default: options.giantGuests)
        options.repeatCount = try given.int("repeat", default: options.repeatCount)
        options.repeatWorkers = try given.int("repeat-workers", default: options.repeatWorkers)
        options.latencyMilliseconds = try given.int("latency-ms", default: options.latencyMilliseconds)
        options.androidShare = try given.double("android-share", default: options.androidShare)
        options.perfDirectory = try? given.string("perf")
        options.jsonPath = try? given.string("json")
        if let text = given.all("workers").last {
            let parts = text.split(separator: ",").map { Int($0) }
            guard !parts.contains(nil) else { throw BenchError("--workers must be comma-separated integers (got \(text))") }
            options.workerCounts = parts.compactMap { $0 }
        }
        for text in given.all("worker-env") {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw BenchError("--worker-env must be NAME=VALUE (got \(text))")
            }
            options.workerEnvironment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        if options.streams < 1 || options.workerCounts.contains(where: { $0 < 1 }) {
            throw BenchError("--streams and --workers must be positive")
        }
        if !(0...1).contains(options.androidShare) {
            throw BenchError("--android-share must be between 0 and 1")
        }
        return options
    }
}
