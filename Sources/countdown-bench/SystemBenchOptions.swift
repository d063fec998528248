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
    var help = false

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

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
        var options = SystemBenchOptions()
        var index = 0
        func value(_ name: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(name) needs a value") }
            return arguments[index]
        }
        func integer(_ name: String) throws -> Int {
            let text = try value(name)
            guard let number = Int(text) else { throw UsageError(description: "\(name) must be an integer (got \(text))") }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help": options.help = true
            case "--streams": options.streams = try integer(argument)
            case "--reminders": options.reminders = try integer(argument)
            case "--giant-guests": options.giantGuests = try integer(argument)
            case "--repeat": options.repeatCount = try integer(argument)
            case "--repeat-workers": options.repeatWorkers = try integer(argument)
            case "--latency-ms": options.latencyMilliseconds = try integer(argument)
            case "--workers":
                let text = try value(argument)
                let parts = text.split(separator: ",").map { Int($0) }
                guard !parts.contains(nil) else { throw UsageError(description: "--workers must be comma-separated integers (got \(text))") }
                options.workerCounts = parts.compactMap { $0 }
            case "--android-share":
                let text = try value(argument)
                guard let share = Double(text) else { throw UsageError(description: "--android-share must be a number (got \(text))") }
                options.androidShare = share
            case "--worker-env":
                let text = try value(argument)
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                    throw UsageError(description: "--worker-env must be NAME=VALUE (got \(text))")
                }
                options.workerEnvironment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            case "--profile": options.profile = true
            case "--perf": options.perfDirectory = try value(argument)
            case "--json": options.jsonPath = try value(argument)
            case "--debug", "--skip-build": break
            default: throw UsageError(description: "unknown argument \(argument)")
            }
            index += 1
        }
        if options.streams < 1 || options.workerCounts.contains(where: { $0 < 1 }) {
            throw UsageError(description: "--streams and --workers must be positive")
        }
        if !(0...1).contains(options.androidShare) {
            throw UsageError(description: "--android-share must be between 0 and 1")
        }
        return options
    }
}
