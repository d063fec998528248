import BlockingIO
import Foundation
import Push
import Testing

/// Records how many sends run at once and answers from a script.
struct RecordingTransport: PushTransport {
    let inFlight = Locked((now: 0, peak: 0))
    let answer: @Sendable (PushMessage) -> PushResult

    func send(_ message: PushMessage) async -> PushResult {
        inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
        try? await Task.sleep(for: .milliseconds(2))
        inFlight.withLock { $0.now -= 1 }
        return answer(message)
    }
}

@Suite struct PushBatchAndRateLimitTests {
    static func messages(_ count: Int) -> [PushMessage] {
        (0..<count).map { .notification(id: "m\($0)", fcmToken: "t\($0)", title: "t", body: "b", data: [:]) }
    }

    @Test func batchKeepsOrderAndBoundsConcurrency() async {
        let transport = RecordingTransport { .accepted(messageName: $0.id) }
        let results = await transport.send(Self.messages(100), concurrency: 8)
        #expect(results == (0..<100).map { .accepted(messageName: "m\($0)") })
        #expect(transport.inFlight.value.peak <= 8)
        #expect(transport.inFlight.value.peak >= 2)
        #expect(await transport.send([], concurrency: 4).isEmpty)
    }

    @Test func tokenBucketPacesToTheRate() async throws {
        // 600/s with a burst of 10: 70 permits need at least (70 - 10) / 600 s = 100 ms.
        let limiter = TokenBucketRateLimiter(perMinute: 36_000, burst: 10)
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<10 { try await limiter.acquire(1) }
        #expect(clock.now - started < .milliseconds(50))
        for _ in 0..<60 { try await limiter.acquire(1) }
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(95))
        #expect(elapsed < .milliseconds(1500))
    }

    @Test func throttlingHalvesTheRate() async throws {
        let limiter = TokenBucketRateLimiter(perMinute: 36_000, burst: 1, slowdownPeriod: .seconds(30))
        await limiter.reportThrottled()
        #expect(await limiter.isSlowed)
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<31 { try await limiter.acquire(1) }
        // 30 waits at 1/300 s instead of 1/600 s.
        #expect(clock.now - started >= .milliseconds(95))
    }

    @Test func waitingIsCancellable() async throws {
        let limiter = TokenBucketRateLimiter(perMinute: 1, burst: 1)
        try await limiter.acquire(1)
        let waiter = Task { try await limiter.acquire(1) }
        try await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func rateLimitedTransportReportsThrottling() async throws {
        let base = RecordingTransport { $0.id == "m1" ? .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED") : .accepted(messageName: nil) }
        let limiter = TokenBucketRateLimiter(perMinute: 600_000)
        let transport = RateLimitedTransport(base, limiter: limiter)
        #expect(await transport.send(Self.messages(1)[0]) == .accepted(messageName: nil))
        #expect(await !limiter.isSlowed)
        #expect(await transport.send(Self.messages(2)[1]) == .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED"))
        #expect(await limiter.isSlowed)
    }
}
