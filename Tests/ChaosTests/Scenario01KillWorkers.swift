import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    @Test("1. SIGKILL a random worker every 2 s during a burst")
    func scenario01KillWorkers() async throws {
        try await ChaosScenario.run(
            number: 1, title: "SIGKILL a random worker every 2 s during a burst",
            settings: ["WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"], latencyMilliseconds: 200
        ) { s in
            try await Self.killWorkers(s)
            return nil
        }
    }

    /// Scenarios 1 and 19: three workers, a burst, and every 2 s a random worker SIGKILLed and a new one started,
    /// until every start is accepted: lost 0; duplicated ≤ the pushes in flight at the kills.
    static func killWorkers(_ s: ChaosScenario) async throws {
        try await s.startWorkers(3)
        let due = try await s.seed(s.size(400, 3000))
        try await s.waitUntil(due)
        var kills: [(at: Double, inFlight: Set<StartKey>)] = []
        var random = SeededGenerator(seed: UInt64(s.number))
        let deadline = ChaosScenario.now + s.size(40, 120)
        while try !s.allAccepted(), ChaosScenario.now < deadline {
            try await Task.sleep(for: .seconds(2))
            let victim = s.system.workers.randomElement(using: &random)!
            let at = ChaosScenario.now
            kills.append((at, try await s.killAndRecord(victim)))
            s.system.retire(victim)
            _ = try s.system.startWorker()
        }
        try await s.waitQuiet(timeout: s.size(60, 120))
        let (inFlight, duplicated) = try s.reportKills(kills)
        s.note("\(kills.count) workers SIGKILLed and restarted: \(inFlight) pushes in flight at the kills, \(duplicated) duplicated")
        let least = s.size(3, 10)
        s.check(kills.count >= least, "at least \(least) kills during the burst (\(kills.count))")
    }
}
