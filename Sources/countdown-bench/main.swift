import Foundation

// `countdown-bench <benchmark> [options]`: measurements that print their figures (see docs/benchmarks.md).

let usage = """
    usage: countdown-bench <benchmark> [options]

    benchmarks:
      push    start pushes per second through the FCM transport to countdown-fake-fcm (push --help for options)
    """

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "push":
    exit(await PushBenchmark.main(Array(arguments.dropFirst())))
case "--help", "-h", "help":
    print(usage)
    exit(0)
case let other:
    FileHandle.standardError.write(Data("countdown-bench: \(other.map { "unknown benchmark \"\($0)\"" } ?? "missing benchmark")\n\(usage)\n".utf8))
    exit(2)
}
