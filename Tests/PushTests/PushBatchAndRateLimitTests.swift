import BlockingIO
import Foundation
import Push
import Testing

@Suite struct PushBatchAndRateLimitTests {
    static func messages(_ count: Int) -> [PushMessage] {
        (0..<count).map { .notification(id: "m\($0)", fcmToken: "t\($0)", title: "t", body: "b", data: [:]) }
    }

    /// Grants every permit at once and counts what it is told.
    final class CountingLimiter: RateLimiter {
        let counts = Locked((permits: 0, throttled: 0))
        func acquire(_ permits: Int) async throws { counts.withLock { $0.permits += permits } }
        func reportThrottled() async { counts.withLock { $0.throttled += 1 } }
    }

    @Test func rateLimitedTransportReportsThrottling() async throws {
        let base = TokenGuardedTransportTests.Answering { $0.id == "m1" ? .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED") : .accepted(messageName: nil) }
        let limiter = CountingLimiter()
        let transport = RateLimitedTransport(base, limiter: limiter)
        #expect(await transport.send(Self.messages(1)[0]) == .accepted(messageName: nil))
        #expect(limiter.counts.value == (1, 0))
        #expect(await transport.send(Self.messages(2)[1]) == .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED"))
        #expect(limiter.counts.value == (2, 1), "a 429 slows the shared budget")
    }
}
