import Testing
import TestSupport

extension ChaosSuite {
    /// Scenario 1 with ANDROID_COUNTDOWN=on: the Android devices' countdown starts go through the same ledger, so lost 0
    /// and duplicated ≤ pushes in flight hold for both platforms together.
    @Test("19. SIGKILL a random worker every 2 s during a burst, Android countdown on")
    func scenario19KillWorkersAndroid() async throws {
        try await ChaosScenario.run(
            number: 19, title: "SIGKILL a random worker every 2 s during a burst, Android countdown on",
            settings: ["WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5", "ANDROID_COUNTDOWN": "on"], latencyMilliseconds: 200
        ) { s in
            try await Self.killWorkers(s)
            let android = s.expected.filter(\.isAndroid).count
            let accepted = Set(try s.acceptedKeys()).filter(\.isAndroid).count
            s.note("\(android) Android countdown starts expected, \(accepted) accepted")
            s.check(android > 0 && accepted == android, "every Android device got its countdown start (\(accepted)/\(android))")
            return nil
        }
    }
}
