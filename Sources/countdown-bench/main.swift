import Foundation
import Telemetry

// countdown-bench <benchmark> [arguments]: each benchmark lives in its own file and is dispatched here.

BuildInfo.answerVersionFlag(program: "countdown-bench")

let usage = """
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

let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case "queue":
    status = await QueueBench.run(Array(arguments.dropFirst()))
case "push":
    status = await PushBenchmark.main(Array(arguments.dropFirst()))
case "system":
    status = await SystemBench.main(Array(arguments.dropFirst()))
case "soak":
    status = await SoakBench.main(Array(arguments.dropFirst()))
case "broadcast":
    status = await BroadcastBench.main(Array(arguments.dropFirst()))
case "-h", "--help", "help":
    print(usage)
    status = 0
default:
    FileHandle.standardError.write(Data((usage + "\n").utf8))
    status = 2
}
exit(status)
