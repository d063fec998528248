import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// A worker whose clock runs 10 minutes fast (libfaketime) beside a normal one: no start goes out before its
    /// due second, because the workers judge time by Redis and PostgreSQL, not their own clock.
    @Test("8. a worker whose clock runs 10 minutes fast")
    func scenario08FastClock() async throws {
        try await ChaosScenario.run(number: 8, title: "a worker whose clock runs 10 minutes fast", latencyMilliseconds: 30) { s in
            _ = try await s.startWorkers(1)
            let fast = try s.system.startWorker(clockOffset: "+10m")
            try await waitUntil(timeout: .seconds(60), every: .milliseconds(100), "the fast worker to start") {
                fast.metricsAddress() != nil || !fast.isRunning
            }
            s.check(fast.isRunning, "the fast-clock worker runs")
            let due = try await s.seed(s.size(100, 500))
            _ = try await s.waitQuiet(timeout: s.size(30, 150))
            let early = s.tally.startTimes(prefix: s.prefix).count { $0 < due }
            let fastJobs = fast.logLines().count { line in
                ["job done", "job will be retried"].contains(line["msg"] as? String ?? "") && line["kind"] as? String == "start"
            }
            let stats = try await s.system.fakeStats()
            s.note("one worker at +10 min (FAKETIME=+10m) beside a normal one; it handled \(fastJobs) start job attempts; "
                   + "fake FCM token grants \(stats["tokensIssued"].map { "\($0)" } ?? "none"), refused \(stats["tokensRefused"].map { "\($0)" } ?? "none")")
            s.check(early == 0, "no start before its due second (\(early) early)")
            return nil
        }
    }
}
