import BlockingIO
import DelayQueue
import Foundation
import TestSupport
import Testing

/// The fake keeps the real queue's semantics, on a clock the test moves.
@Suite struct InMemoryDelayQueueTests {
    final class ManualClock: Sendable {
        private let now = Locked(Date(timeIntervalSince1970: 1_776_000_000))
        var date: Date { now.value }
        func advance(_ duration: Duration) { now.withLock { $0 = $0.addingTimeInterval(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) } }
    }

    let clock = ManualClock()

    func makeQueue(maxAttempts: Int = 3) -> InMemoryDelayQueue {
        let clock = self.clock
        return InMemoryDelayQueue(
            policy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: .seconds(10), maxDelay: .seconds(600), jitter: 0.5),
            clock: { clock.date }, random: { 0 })
    }

    @Test func dueTimesFollowTheInjectedClock() async throws {
        let queue = makeQueue()
        try await queue.enqueue([job("a", due: .after(.seconds(60))), job("b", due: .now)])
        var batch = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(batch.ids == ["b"])
        #expect(batch.nextWakeIn == .seconds(30), "the lease of b expires before a is due")
        try await queue.ack(batch.jobs.map(\.lease))
        clock.advance(.seconds(59))
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
        clock.advance(.seconds(1))
        batch = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(batch.ids == ["a"])
    }

    @Test func reenqueueCancelAndStaleLeases() async throws {
        let queue = makeQueue()
        try await queue.enqueue(job("x", payload: "1"))
        try await queue.enqueue(job("x", payload: "2", due: .after(.seconds(5))))
        #expect(try await queue.stats().delayed == 1)
        clock.advance(.seconds(5))
        let claimed = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(claimed.payload == Array("2".utf8))
        #expect(try await queue.cancel("x"))
        #expect(try await queue.ack(claimed.lease) == false)
        #expect(try await queue.fail(claimed.lease, error: "e") == .stale)
    }

    @Test func expiredLeasesComeBackAndAttemptsCount() async throws {
        let queue = makeQueue()
        try await queue.enqueue(job("y"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(10)).jobs.first)
        clock.advance(.seconds(11))
        let second = try #require(try await queue.claim(max: 1, lease: .seconds(10)).jobs.first)
        #expect(second.attempt == 2)
        #expect(try await queue.ack(first.lease) == false)
        #expect(try await queue.ack(second.lease))
    }

    @Test func failBacksOffThenDeadLettersAndRedrives() async throws {
        let queue = makeQueue(maxAttempts: 2)
        try await queue.enqueue(job("z", kind: "push"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(try await queue.fail(first.lease, error: "503") == .retrying(after: .seconds(5)))
        clock.advance(.seconds(5))
        let second = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(try await queue.fail(second.lease, error: "503 again") == .deadLettered)
        let dead = try await queue.deadLetters(limit: 5)
        #expect(dead.map(\.id) == ["z"])
        #expect(dead.first?.attempts == 2)
        #expect(dead.first?.lastError == "503 again")
        #expect(try await queue.stats().dead == 1)
        #expect(try await queue.redrive(["z"]) == 1)
        #expect(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first?.attempt == 1)
    }

    @Test func inspectionAndListing() async throws {
        let queue = makeQueue()
        try await queue.enqueue([job("start:1", kind: "start"), job("end:1", kind: "end", due: .after(.seconds(9)))])
        #expect(try await queue.jobIDs(prefix: "start:", kind: nil) == ["start:1"])
        #expect(try await queue.jobIDs(prefix: "", kind: "end") == ["end:1"])
        let infos = try await queue.jobs(ids: ["end:1", "nope"])
        #expect(infos.keys.sorted() == ["end:1"])
        #expect(infos["end:1"]?.state == .waiting(dueAt: clock.date.addingTimeInterval(9)))
    }

    @Test func waitForWorkReturnsWhenAJobIsEnqueued() async throws {
        let queue = makeQueue()
        let started = ContinuousClock.now
        async let waited: Void = queue.waitForWork(timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(50))
        try await queue.enqueue(job("wake"))
        try await waited
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
