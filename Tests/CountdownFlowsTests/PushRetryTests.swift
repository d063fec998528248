import CountdownDomain
@testable import CountdownFlows
import Testing

/// `PushRetry`: a run is retried when some answer asks for it, after the longest `Retry-After` (60 s after a
/// configuration error), and not at all when every push was settled.
@Suite struct PushRetryTests {
    @Test func settledAnswersNeedNoRetry() {
        var retry = PushRetry()
        for delivery in [Delivery.accepted(name: "m"), .rejected(reason: "INVALID_ARGUMENT"), .tokenRefused(.fcm, reason: "UNREGISTERED")] {
            retry.note(delivery)
        }
        #expect(retry.outcome() == nil)
    }

    @Test func theLongestWaitAskedForWins() {
        var retry = PushRetry()
        retry.note(.retry(after: nil, reason: "UNAVAILABLE"))
        #expect(retry.outcome() == .retry(after: nil, reason: "push_retry"))
        retry.note(.retry(after: .seconds(5), reason: "QUOTA_EXCEEDED"))
        retry.note(.accepted(name: "m"))
        #expect(retry.outcome(reason: "x") == .retry(after: .seconds(5), reason: "x"))
        retry.note(.configurationError(reason: "THIRD_PARTY_AUTH_ERROR"))
        #expect(retry.outcome() == .retry(after: .seconds(60), reason: "push_retry"))
    }
}
