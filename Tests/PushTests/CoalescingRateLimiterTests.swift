import BlockingIO
import Foundation
import Push
import Testing
import TestSupport

@Suite struct CoalescingRateLimiterTests {
    /// Records each reservation; the first one is held until released.
    final class RecordingLimiter: RateLimiter {
        let reservations = Locked([Int]())
        let throttled = Locked(0)
        let failing = Locked(false)
        private let gate = AsyncGate()

        func acquire(_ permits: Int) async throws {
            reservations.withLock { $0.append(permits) }
            await gate.pass()
            if failing.value { throw CancellationError() }
        }

        func reportThrottled() async { throttled.withLock { $0 += 1 } }

        func open() { gate.open() }
    }

    /// One caller of one permit starts a reservation of `firstReservation` that `base` holds; `callers` more of one
    /// permit each queue behind it; then it is let through and every caller finishes.
    static func queue(_ callers: Int, behindFirstReservationOf limiter: CoalescingRateLimiter, base: RecordingLimiter,
                      firstReservation: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // A wait that times out must fail the test, not leave the group waiting for callers at a closed gate.
            defer { base.open() }
            group.addTask { try await limiter.acquire(1) }
            try await waitUntil(timeout: .seconds(15), "the first reservation") { base.reservations.value == [firstReservation] }
            for _ in 0..<callers { group.addTask { try await limiter.acquire(1) } }
            try await waitUntil(timeout: .seconds(15), "\(callers) callers queued behind the held reservation") { limiter.waiting == callers }
            base.open()
            try await group.waitForAll()
        }
    }

    @Test func callersWaitingDuringAReservationShareTheNextOne() async throws {
        let base = RecordingLimiter()
        let limiter = CoalescingRateLimiter(base, maxPermits: 64)
        try await Self.queue(100, behindFirstReservationOf: limiter, base: base, firstReservation: 1)
        let reservations = base.reservations.value
        #expect(reservations.reduce(0, +) == 101, "every permit reserved exactly once: \(reservations)")
        #expect(reservations.allSatisfy { $0 <= 64 })
        #expect(reservations.count < 10, "100 callers shared a few reservations: \(reservations)")
    }

    /// A limiter that takes `prefetch` permits ahead (usable for a second of `clock`) over a recording base, whose
    /// reservations go through at once when `opened`.
    static func prefetching(_ prefetch: Int, opened: Bool) -> (RecordingLimiter, ManualInstantClock, CoalescingRateLimiter) {
        let base = RecordingLimiter()
        if opened { base.open() }
        let clock = ManualInstantClock()
        return (base, clock, CoalescingRateLimiter(base, prefetch: prefetch, prefetchLifetime: .seconds(1), now: { clock.now }))
    }

    @Test func permitsReservedAheadServeLaterCallersWithoutAReservation() async throws {
        let (base, _, limiter) = Self.prefetching(10, opened: true)
        try await limiter.acquire(1)
        #expect(base.reservations.value == [11])
        for _ in 0..<5 { try await limiter.acquire(2) }
        #expect(base.reservations.value == [11], "ten permits ahead covered five callers of two")
        #expect(limiter.banked == 0)
        try await limiter.acquire(3)
        #expect(base.reservations.value == [11, 13])
        #expect(limiter.banked == 10)
    }

    @Test func permitsReservedAheadExpireAndAThrottleDropsThem() async throws {
        let (base, clock, limiter) = Self.prefetching(10, opened: true)
        try await limiter.acquire(1)
        clock.advance(by: .milliseconds(1500))
        #expect(limiter.banked == 0)
        try await limiter.acquire(1)
        #expect(base.reservations.value == [11, 11], "expired permits are not used")
        await limiter.reportThrottled()
        #expect(limiter.banked == 0)
        try await limiter.acquire(1)
        #expect(base.reservations.value == [11, 11, 11], "a throttle drops the permits reserved ahead")
        #expect(base.throttled.value == 1)
    }

    @Test func callersQueuedDuringAReservationAreServedFromItsPermitsAhead() async throws {
        let (base, _, limiter) = Self.prefetching(20, opened: false)
        try await Self.queue(25, behindFirstReservationOf: limiter, base: base, firstReservation: 21)
        // Twenty of the queued callers took the permits reserved ahead; the other five shared one reservation.
        #expect(base.reservations.value == [21, 25], "\(base.reservations.value)")
        #expect(limiter.banked == 20)
    }

    @Test func aThrottleWhileAReservationIsInFlightLeavesNothingBanked() async throws {
        let (base, _, limiter) = Self.prefetching(10, opened: false)
        let first = Task { try await limiter.acquire(1) }
        try await waitUntil(timeout: .seconds(15), "the reservation is held") { base.reservations.value == [11] }
        await limiter.reportThrottled()
        base.open()
        try await first.value
        #expect(limiter.banked == 0, "permits reserved at the old rate are not handed out after the throttle")
        try await limiter.acquire(1)
        #expect(base.reservations.value == [11, 11])
        #expect(limiter.banked == 10)
    }

    @Test func aCancelledCallerGetsNoPermitReservedAhead() async throws {
        let (_, _, limiter) = Self.prefetching(10, opened: true)
        try await limiter.acquire(1)
        let gate = AsyncGate()
        let cancelled = Task {
            await gate.pass()
            try await limiter.acquire(1)
        }
        cancelled.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(limiter.banked == 10)
    }

    @Test func aCallerCancelledWhileWaitingLeavesAtOnce() async throws {
        let base = RecordingLimiter()
        let limiter = CoalescingRateLimiter(base)
        let first = Task { try await limiter.acquire(1) }
        try await waitUntil(timeout: .seconds(15), "the first reservation is held") { base.reservations.value == [1] }
        let waiting = Task { try await limiter.acquire(5) }
        try await waitUntil(timeout: .seconds(15), "the second caller waits") { limiter.waiting == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(limiter.waiting == 0)
        base.open()
        try await first.value
        #expect(base.reservations.value == [1], "the cancelled caller's permits were never reserved")
    }

    @Test func aFailedReservationFailsItsCallersAndThrottlingPassesThrough() async throws {
        let base = RecordingLimiter()
        base.failing.withLock { $0 = true }
        base.open()
        let limiter = CoalescingRateLimiter(base)
        await #expect(throws: CancellationError.self) { try await limiter.acquire(3) }
        base.failing.withLock { $0 = false }
        try await limiter.acquire(2)
        #expect(base.reservations.value == [3, 2])
        await limiter.reportThrottled()
        #expect(base.throttled.value == 1)
    }
}

extension CoalescingRateLimiterTests {
    /// Holds each reservation until opened; a reservation whose caller was cancelled meanwhile throws.
    final class CancellableLimiter: RateLimiter {
        let reservations = Locked([Int]())
        private let gate = AsyncGate()

        func acquire(_ permits: Int) async throws {
            reservations.withLock { $0.append(permits) }
            await gate.pass()
            try Task.checkCancellation()
        }

        func reportThrottled() async {}

        func open() { gate.open() }
    }

    @Test func aLeaderCancelledDuringItsReservationLeavesTheOthersToTheNextLeader() async throws {
        let base = CancellableLimiter()
        let limiter = CoalescingRateLimiter(base)
        let leader = Task { try await limiter.acquire(1) }
        defer { base.open() }
        try await waitUntil(timeout: .seconds(15), "the leader's reservation is held") { base.reservations.value == [1] }
        let follower = Task { try await limiter.acquire(2) }
        try await waitUntil(timeout: .seconds(15), "the follower waits") { limiter.waiting == 1 }
        leader.cancel()
        base.open()
        await #expect(throws: CancellationError.self) { try await leader.value }
        try await follower.value
        #expect(base.reservations.value == [1, 2], "the follower led a reservation of its own")
    }
}
