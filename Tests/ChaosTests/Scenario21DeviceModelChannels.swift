import Testing

extension ChaosSuite {
    /// 21. Scenario 20's randomized run on APNs broadcast channels (`PUSH_TRANSPORT=apns`, `APNS_BROADCAST=on`, the
    /// fake APNs behind nghttpx; `DeviceModelRun.runOnChannels`): iPhones on iOS 18 or later are started on their
    /// stream's channel and get its updates and end as broadcasts, older ones by token, Android through FCM; phones
    /// offline for a window get what APNs stored for them; a worker SIGKILLed every few seconds. Every invariant 0
    /// violations, duplicated ≤ starts in flight at the kills.
    @Test("21. a randomized run on a model of each phone, on broadcast channels, workers SIGKILLed") func scenario21DeviceModelChannels() async throws {
        try await ChaosScenario.run(
            number: 21, title: "a randomized run on a model of each phone, on broadcast channels, workers SIGKILLed",
            settings: DeviceModelRun.settings, latencyMilliseconds: DeviceModelRun.latencyMilliseconds) { try await DeviceModelRun.runOnChannels($0) }
    }
}
