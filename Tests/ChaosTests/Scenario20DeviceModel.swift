import Testing

extension ChaosSuite {
    /// 20. A randomized run replayed on a model of each phone (`DeviceModelRun`, `DeviceModel`): reschedules, cancels,
    /// status changes, late guests, tokens and sessions around T-lead, a worker SIGKILLed every few seconds; every
    /// invariant 0 violations, duplicated ≤ starts in flight at the kills.
    @Test("20. a randomized run on a model of each phone, workers SIGKILLed") func scenario20DeviceModel() async throws {
        try await ChaosScenario.run(
            number: 20, title: "a randomized run on a model of each phone, workers SIGKILLed",
            settings: ["START_LEAD_SECONDS": "20", "EXPIRE_AFTER_SECONDS": "6", "WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5",
                       "ANDROID_COUNTDOWN": "on"],
            latencyMilliseconds: 30, DeviceModelRun.run)
    }
}
