import BlockingIO
@testable import CountdownAPI
import Testing

@Suite("Per-key write limits")
struct KeyedRateLimiterTests {
    final class Clock: Sendable {
        let start = ContinuousClock.now
        let offset = Locked(Duration.zero)
        var now: ContinuousClock.Instant { start + offset.value }
        func advance(_ duration: Duration) { offset.withLock { $0 += duration } }
    }

    @Test func aKeyGetsItsBurstThenOneTokenPerInterval() {
        let clock = Clock()
        let limiter = KeyedRateLimiter(perMinute: 60, burst: 3, now: { clock.now })
        for _ in 0..<3 { #expect(limiter.acquire("u1") == nil) }
        let wait = limiter.acquire("u1")
        #expect(wait != nil)
        #expect(wait! > .milliseconds(900) && wait! <= .seconds(1))
        #expect(limiter.acquire("u2") == nil, "other keys have their own bucket")
        clock.advance(.seconds(1))
        #expect(limiter.acquire("u1") == nil)
        #expect(limiter.acquire("u1") != nil)
        clock.advance(.seconds(60))
        for _ in 0..<3 { #expect(limiter.acquire("u1") == nil) }
        #expect(limiter.acquire("u1") != nil, "never more than the burst")
    }

    @Test func theTableOfKeysIsBounded() {
        let clock = Clock()
        let limiter = KeyedRateLimiter(perMinute: 60, burst: 2, maxKeys: 100, now: { clock.now })
        for index in 0..<1000 { _ = limiter.acquire("k\(index)") }
        #expect(limiter.keys <= 100)
        #expect(limiter.acquire("k999") == nil && limiter.acquire("k999") != nil, "recent keys keep their state")
    }
}
