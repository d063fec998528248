import BlockingIO
import Push
import Redis
import Testing
import TestSupport

@Suite struct RedisRateLimiterTests {
    let redis: RedisClient
    let namespace = TestEnvironment.uniqueName("push")

    init() throws {
        redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
    }

    /// A limiter that records the waits Redis hands out instead of sleeping them.
    static func recording(_ redis: RedisClient, namespace: String, perMinute: Int, burst: Int) -> (RedisRateLimiter, Locked<[Duration]>) {
        let waits = Locked<[Duration]>([])
        let limiter = RedisRateLimiter(redis: redis, namespace: namespace, perMinute: perMinute, burst: burst) { wait in
            waits.withLock { $0.append(wait) }
        }
        return (limiter, waits)
    }

    // One permit a minute: seconds of delay on a busy test machine are noise against the minute-long interval.

    @Test func burstIsFreeThenPermitsAreSpacedByTheInterval() async throws {
        let (limiter, waits) = Self.recording(redis, namespace: namespace, perMinute: 1, burst: 3)
        for _ in 0..<6 { try await limiter.acquire(1) }
        let recorded = waits.value
        #expect(recorded.count == 3)  // the first three had nothing to wait for
        for (index, wait) in recorded.enumerated() {
            let expected = Duration.seconds(60 * (index + 1))
            #expect(wait <= expected && wait > expected - .seconds(10), "wait \(index): \(wait)")
        }
    }

    @Test func workersShareOneBudget() async throws {
        let (first, firstWaits) = Self.recording(redis, namespace: namespace, perMinute: 1, burst: 2)
        let (second, secondWaits) = Self.recording(redis, namespace: namespace, perMinute: 1, burst: 2)
        try await first.acquire(1)
        try await second.acquire(1)
        try await first.acquire(1)
        try await second.acquire(1)
        #expect(firstWaits.value.count == 1)
        #expect(secondWaits.value.count == 1)
        let longest = (firstWaits.value + secondWaits.value).max() ?? .zero
        #expect(longest > .seconds(110), "the fourth permit of the shared budget waits about two intervals: \(longest)")
        let (other, otherWaits) = Self.recording(redis, namespace: TestEnvironment.uniqueName("push"), perMinute: 1, burst: 2)
        try await other.acquire(1)
        #expect(otherWaits.value.isEmpty, "another namespace has its own budget")
    }

    @Test func throttlingSlowsEveryWorker() async throws {
        let (limiter, waits) = Self.recording(redis, namespace: namespace, perMinute: 1, burst: 1)
        let (peer, _) = Self.recording(redis, namespace: namespace, perMinute: 1, burst: 1)
        await peer.reportThrottled()
        #expect(try await limiter.isSlowed())
        try await limiter.acquire(1)
        try await limiter.acquire(1)
        let wait = try #require(waits.value.first)
        #expect(wait > .seconds(110) && wait <= .seconds(120), "the interval doubled: \(wait)")
        let ttl = try await redis.command("PTTL", RedisArgument("{\(namespace)}:push:rate:slow")).integer ?? 0
        #expect(ttl > 30_000 && ttl <= 60_000)
    }

    @Test func realSleepPacesThroughput() async throws {
        let limiter = RedisRateLimiter(redis: redis, namespace: namespace, perMinute: 36_000, burst: 10)
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<70 { group.addTask { try await limiter.acquire(1) } }
            try await group.waitForAll()
        }
        #expect(clock.now - started >= .milliseconds(95))
    }
}
