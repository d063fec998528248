import BlockingIO
import Foundation
import Push
import Redis
import Testing
import TestSupport

/// One provider token per key id for the fleet, kept in real Redis.
@Suite struct SharedAPNsProviderTokenTests {
    let redis: RedisClient
    let namespace = TestEnvironment.uniqueName("apns")
    let clock = ManualClock()
    let signatures = Locked(0)

    init() throws {
        redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
    }

    func worker() throws -> SharedAPNsProviderToken {
        let signatures = self.signatures
        let signer = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789", now: clock.function,
                                           onRefresh: { signatures.withLock { $0 += 1 } })
        return SharedAPNsProviderToken(signer: signer, redis: redis, namespace: namespace)
    }

    @Test func manyWorkersShareOneSignedToken() async throws {
        let workers = try (0..<5).map { _ in try worker() }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for worker in workers { for _ in 0..<4 { group.addTask { try await worker.accessToken() } } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(signatures.value == 1, "one worker signs under the lock")
        // A worker started later (a restart) takes the same token instead of signing.
        #expect(try await worker().accessToken() == tokens.first)
        #expect(signatures.value == 1)
    }

    @Test func reSignedAtTheRefreshAgeOnce() async throws {
        let first = try worker()
        let second = try worker()
        let old = try await first.accessToken()
        clock.advance(by: 39 * 60)
        #expect(try await second.accessToken() == old)
        clock.advance(by: 2 * 60)
        let renewed = try await second.accessToken()
        #expect(renewed != old)
        #expect(try await first.accessToken() == renewed)
        #expect(signatures.value == 2)
    }

    @Test func expiredProviderTokenIsReSignedButNotTooSoon() async throws {
        let first = try worker()
        let second = try worker()
        let token = try await first.accessToken()
        await second.invalidate(token)  // younger than 20 minutes: APNs would answer TooManyProviderTokenUpdates
        #expect(try await second.accessToken() == token)
        clock.advance(by: 25 * 60)
        await second.invalidate(token)
        let renewed = try await second.accessToken()
        #expect(renewed != token)
        // The other worker meets the same refusal and takes the new token instead of signing again.
        await first.invalidate(token)
        #expect(try await first.accessToken() == renewed)
        #expect(signatures.value == 2)
    }
}
