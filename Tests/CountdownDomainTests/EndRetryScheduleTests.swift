import CountdownDomain
import Testing

/// SPEC 12.2: a refused end is retried at most 10 s apart during its first minute, then with a backoff doubling from
/// 30 s to 10 minutes.
@Suite struct EndRetryScheduleTests {
    @Test func theFirstMinuteRetriesEveryFewSeconds() {
        for failing in [0.0, 0.4, 9, 20, 45, 59.9] {
            let delay = EndRetrySchedule.delay(failingForSeconds: failing)
            #expect(delay <= .seconds(10) && delay == EndRetrySchedule.firstMinuteInterval, "\(failing) s")
        }
        #expect(EndRetrySchedule.delay(failingForSeconds: -3) == EndRetrySchedule.firstMinuteInterval, "a clock skew reads as just failed")
    }

    @Test func thenTheBackoffDoublesFromThirtySecondsToTenMinutes() {
        // Each try at the time the one before it chose: 60, 90, 150, 270, 510, 990, 1590 s after the first failure.
        var failing = 60.0
        var waits: [Duration] = []
        for _ in 0..<7 {
            let wait = EndRetrySchedule.delay(failingForSeconds: failing)
            waits.append(wait)
            failing += Double(wait.components.seconds)
        }
        #expect(waits == [30, 60, 120, 240, 480, 600, 600].map { Duration.seconds($0) })
        #expect(EndRetrySchedule.delay(failingForSeconds: 1e9) == .seconds(600))
    }

    /// A fault that clears within 20 s of the first failure: the tries in the first minute reach it within 30 s even
    /// with a second of latency per try.
    @Test func aFaultClearingWithinTwentySecondsIsMetWithinThirty() {
        var at = 0.5
        while at < 20 { at += Double(EndRetrySchedule.delay(failingForSeconds: at).components.seconds) + 1 }
        #expect(at < 30, "accepted at \(at) s")
    }
}
