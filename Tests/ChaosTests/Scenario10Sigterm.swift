import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// SIGTERM during a burst: the worker exits 0 within the grace period; nothing lost.
    @Test("10. SIGTERM during a burst")
    func scenario10Sigterm() async throws {
        try await ChaosScenario.run(
            number: 10, title: "SIGTERM during a burst", settings: ["WORKER_CONCURRENCY": "8", "SHUTDOWN_GRACE_SECONDS": "10"],
            latencyMilliseconds: 100
        ) { s in
            let grace = Double(s.system.settings["SHUTDOWN_GRACE_SECONDS"] ?? "") ?? 10
            try await s.startWorkers(2)
            let due = try await s.seed(s.size(300, 2000))
            try await s.waitUntil(due + 1.5)
            let victim = s.system.workers[0]
            let before = try s.acceptedKeys().count
            victim.terminate()
            let signalled = ChaosScenario.now
            _ = try s.system.startWorker()
            let code = await victim.waitForExit(timeout: grace + 10)
            let took = ChaosScenario.now - signalled
            let handedBack = victim.logLines().filter { $0["msg"] as? String == "handed back unfinished jobs" }
                .reduce(0) { $0 + ChaosScenario.integer($1["jobs"]) }
            s.system.retire(victim)
            s.note("SIGTERM 1.5s after the due second with \(before) of \(s.expected.count) starts accepted; exit code "
                   + "\(code.map(String.init) ?? "none") after \(ChaosScenario.fixed(took, 2))s (grace \(Int(grace))s), \(handedBack) jobs handed back; "
                   + "a replacement worker started at once")
            s.check(code == 0, "exit code 0 (\(code.map(String.init) ?? "none"))")
            s.check(took <= grace, "exited within the grace period (\(ChaosScenario.fixed(took, 2))s ≤ \(Int(grace))s)")
            try await s.waitQuiet(timeout: s.size(60, 120))
            return nil
        }
    }
}
