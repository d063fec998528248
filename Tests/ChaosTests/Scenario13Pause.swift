import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// `countdown-admin pause --kind start` for 30 s (8 s quick) in the middle of a burst, then `resume`: nothing is
    /// claimed while paused; lost 0, duplicated 0.
    @Test("13. pause starts for 30 s mid-burst, then resume")
    func scenario13Pause() async throws {
        try await ChaosScenario.run(number: 13, title: "pause starts for 30 s mid-burst, then resume", settings: ["WORKER_CONCURRENCY": "8"],
                                    latencyMilliseconds: 50) { s in
            let pause = s.size(8, 30)
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(300, 2000))
            try await s.waitUntil(due + 0.5)
            let before = try s.acceptedKeys().count
            _ = try await s.system.adminJSON(["pause", "--kind", "start", "--reason", "chaos", "--yes"])
            let pausedAt = Date().timeIntervalSince1970
            try await waitUntil(timeout: .seconds(30), every: .milliseconds(100), "the running start jobs to finish") {
                try await s.system.queueStats().leased == 0
            }
            let settled = try s.acceptedKeys().count
            try await s.waitUntil(pausedAt + Double(pause))
            let during = try s.acceptedKeys().count
            let stats = try await s.system.adminJSON(["stats"]) as? [String: Any] ?? [:]
            _ = try await s.system.adminJSON(["resume"])
            let pausedJobs = stats["pausedJobs"] as? Int ?? 0
            s.note("paused \(pause)s from 0.5s after the due second: \(before) starts accepted at the pause, \(settled) once running jobs "
                   + "finished, \(during) at the resume; stats showed \(stats["pausedJobs"].map { "\($0)" } ?? "no") held jobs")
            s.check(during == settled, "nothing claimed while paused (\(settled) → \(during))")
            s.check(during < s.expected.count, "the pause came in the middle of the burst")
            s.check(pausedJobs > 0, "stats showed the held jobs")
            _ = try await s.waitQuiet(timeout: s.size(60, 120))
            return nil
        }
    }
}
