import CountdownDomain
import CountdownWorker
import Foundation
import Redis
import Testing
import TestSupport

@Suite struct ServerClockTests {
    @Test func theServersAnswerBelongsToTheMiddleOfTheRoundTrip() {
        let host = Date(timeIntervalSince1970: 1_000_000)
        let clock = ServerClock(local: { host })
        #expect(clock.now() == host)
        // Host asked at +0 s and heard back at +2 s; the server said host time − 599 s: the host runs 600 s fast.
        clock.record(server: host.addingTimeInterval(-599), sent: host, received: host.addingTimeInterval(2))
        #expect(abs(clock.offsetSeconds - -600) < 1e-9)
        #expect(abs(clock.now().timeIntervalSince(host.addingTimeInterval(-600))) < 1e-9)
    }

    @Test func aHostTenMinutesFastIsCorrectedByRedisTime() async throws {
        let redis = RedisClient(configuration: try RedisConfiguration(url: TestEnvironment.redisURL), poolSize: 1)
        defer { redis.close() }
        let fast = ServerClock(local: { Date().addingTimeInterval(600) })
        try await fast.sync(with: redis)
        #expect(abs(fast.offsetSeconds + 600) < 1, "offset \(fast.offsetSeconds)")
        #expect(abs(fast.now().timeIntervalSinceNow) < 1)
        let honest = ServerClock()
        try await honest.sync(with: redis)
        #expect(abs(honest.offsetSeconds) < 1)
    }
}
