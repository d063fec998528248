import Testing

extension ChaosSuite {
    /// 20. A randomized run replayed on a model of each phone (`DeviceModelRun`, `DeviceModel`): reschedules, cancels,
    /// status changes, late guests, tokens and sessions around T-lead, phones offline for a window, repeated
    /// push-to-starts, a worker SIGKILLed every few seconds; every invariant 0 violations, duplicated ≤ starts in flight
    /// at the kills. `END_DISMISS_AFTER_SECONDS=3`: an Android end's ttl then rests on the countdown's `staleAt`
    /// (SPEC 12.2), which the offline phones test.
    @Test("20. a randomized run on a model of each phone, workers SIGKILLed") func scenario20DeviceModel() async throws {
        try await ChaosScenario.run(
            number: 20, title: "a randomized run on a model of each phone, workers SIGKILLed",
            settings: DeviceModelRun.settings, latencyMilliseconds: DeviceModelRun.latencyMilliseconds, DeviceModelRun.run)
    }
}
