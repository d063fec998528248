import Foundation
import Telemetry

// countdown-bench <benchmark> [arguments]: the benchmarks are listed in Benchmarks.

BuildInfo.answerVersionFlag(program: "countdown-bench")
exit(await Benchmarks.main(Array(CommandLine.arguments.dropFirst())))
