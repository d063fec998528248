import Foundation
import PushPayloads
import Testing

/// SPEC 12.2: an end, on every path, is kept for a phone offline until the countdown it ends goes stale.
struct EndExpiryTests {
    private let now = 1_000_000
    private func at(_ seconds: Int) -> Date { Date(timeIntervalSince1970: Double(seconds)) }

    private func expiry(dismiss: Int, shownStart: Int, expireAfter: Int, lastsUntil: Int? = nil) -> Int {
        EndExpiry.epochSeconds(now: at(now), dismissAfterSeconds: dismiss, shownStart: at(shownStart), expireAfterSeconds: expireAfter,
                               lastsUntil: lastsUntil.map(at))
    }

    @Test func anEndIsNeverDroppedBeforeTheStaleDateOfWhatItEnds() {
        #expect(expiry(dismiss: 900, shownStart: now + 1800, expireAfter: 3600) == now + 5400,
                "a cancel before the start: until the shown start + EXPIRE_AFTER_SECONDS")
        #expect(expiry(dismiss: 900, shownStart: now - 7200, expireAfter: 3600) == now + 900, "a countdown already stale: the dismissal date")
        #expect(expiry(dismiss: 3, shownStart: now + 10, expireAfter: 6) == now + 16)
        #expect(expiry(dismiss: 3, shownStart: now - 4, expireAfter: 6) == now + 3)
        #expect(expiry(dismiss: 3, shownStart: now - 1, expireAfter: 6) == now + 5, "not the dismissal date: the stale date is later")
    }

    @Test func noStaleDatePastTheCountdownsOwnLifeCounts() {
        #expect(expiry(dismiss: 900, shownStart: now + 86_400, expireAfter: 3600, lastsUntil: now + 7 * 3600) == now + 7 * 3600,
                "never past 8 hours after the channel's first start")
        #expect(expiry(dismiss: 900, shownStart: now + 1800, expireAfter: 3600, lastsUntil: now + 60) == now + 900,
                "the dismissal date still holds")
    }

    @Test func theAndroidEndsTTLIsTheSecondsUntilThen() {
        #expect(AndroidCountdownMessage.endTTLSeconds(endDismissAfterSeconds: 3, plannedStart: at(now + 10), expireAfterSeconds: 6,
                                                      now: at(now).addingTimeInterval(0.7)) == 16, "counted from the whole second")
    }
}
