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

    /// Grants every permit at once and counts what it is told.
    final class CountingLimiter: RateLimiter {
        let counts = Locked((permits: 0, throttled: 0))
        func acquire(_ permits: Int) async throws { counts.withLock { $0.permits += permits } }
        func reportThrottled() async { counts.withLock { $0.throttled += 1 } }
    }

    @Test func rateLimitedTransportReportsThrottling() async throws {
        let base = RecordingTransport { $0.id == "m1" ? .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED") : .accepted(messageName: nil) }
        let limiter = CountingLimiter()
        let transport = RateLimitedTransport(base, limiter: limiter)
        #expect(await transport.send(Self.messages(1)[0]) == .accepted(messageName: nil))
        #expect(limiter.counts.value == (1, 0))
        #expect(await transport.send(Self.messages(2)[1]) == .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED"))
        #expect(limiter.counts.value == (2, 1), "a 429 slows the shared budget")
    }
}
