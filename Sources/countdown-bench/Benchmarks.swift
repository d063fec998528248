import Foundation

/// The benchmarks `countdown-bench` runs, each in its own file, by name: its usage and its entry point.
enum Benchmarks {
    static let usage = """
        usage: countdown-bench <benchmark> [arguments]
        benchmarks:
          queue    the Redis delay queue (enqueue, worker, drive, steady, memory)
          push     start pushes per second through the FCM transport to countdown-fake-fcm
          system   the whole system (workers, PostgreSQL, Redis, fake FCM) under a start burst and a reminder fan-out
                   (run it through scripts/bench system, which starts the servers)
          soak     the fleet under steady churn with a short retention, a reading per interval and a flat-or-not verdict
                   (run it through scripts/soak, which starts the servers)
          broadcast the end of one stream with 100,000 activities on its APNs broadcast channel, against the fake APNs
                   (run it through scripts/bench broadcast, which starts the servers)
        """

    /// Each benchmark's usage, and its entry point: the exit status, or an error in its arguments.
    static let all: [String: (usage: String, main: @Sendable ([String]) async throws -> Int32)] = [
        "queue": (QueueBench.usage, QueueBench.run),
        "push": (PushBenchmark.usage, PushBenchmark.main),
        "system": (SystemBenchOptions.usage, SystemBench.main),
        "soak": (SoakBench.usage, SoakBench.main),
        "broadcast": (BroadcastBench.usage, BroadcastBench.main),
    ]

    /// Runs `countdown-bench <benchmark> [arguments]` and returns its exit status: `--help` or `-h` anywhere prints the
    /// usage (the benchmark's after its name) on stdout, 0; no known benchmark, or an error in the benchmark's
    /// arguments, prints it and the error on stderr, 2.
    static func main(_ arguments: [String]) async -> Int32 {
        let benchmark = arguments.first.flatMap { all[$0] }
        if arguments.contains("--help") || arguments.contains("-h") || arguments.first == "help" {
            print(benchmark?.usage ?? usage)
            return 0
        }
        guard let benchmark else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 2
        }
        do {
            return try await benchmark.main(Array(arguments.dropFirst()))
        } catch {
            FileHandle.standardError.write(Data("\(benchmark.usage)\nerror: \(error)\n".utf8))
            return 2
        }
    }
}
