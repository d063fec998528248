import BlockingIO
import Testing

@Suite struct BackoffTests {
    @Test func doublesFromTheFirstWaitUpToTheLimit() {
        let backoff = Backoff(first: .milliseconds(100), limit: .seconds(5))
        #expect((0...8).map { backoff.delay(afterFailure: $0) } == [
            .zero, .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600), .milliseconds(3200),
            .seconds(5), .seconds(5),
        ])
    }

    @Test func manyFailuresStayAtTheLimit() {
        let backoff = Backoff(first: .seconds(2), limit: .seconds(600))
        #expect(backoff.delay(afterFailure: 1_000_000) == .seconds(600))
        #expect(backoff.delay(afterFailure: Int.max) == .seconds(600))
        #expect(backoff.delay(afterFailure: -3) == .zero)
        #expect(Backoff(first: .zero, limit: .seconds(1)).delay(afterFailure: Int.max) == .zero, "a zero wait stays zero, at once")
    }

    @Test func aLimitEqualToTheFirstWaitIsAConstantWait() {
        let backoff = Backoff(first: .seconds(1), limit: .seconds(1))
        #expect((1...5).map { backoff.delay(afterFailure: $0) } == Array(repeating: .seconds(1), count: 5))
    }
}
