import DelayQueue
import Foundation
import Testing

/// `advance`: waiting jobs due later become due now with their attempts; leased, dead and missing ones stay as they
/// are. Run against both queues.
@Suite struct QueueAdvanceTests {
    @Test(arguments: QueueImplementation.allCases)
    func advanceMakesOnlyWaitingJobsDueNow(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation, policy: RetryPolicy(maxAttempts: 5))
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue([job("retrying"), job("running"), job("later", due: .after(.seconds(600)))])
        let claimed = try await queue.claim(max: 2, lease: .seconds(30))
        let retrying = try #require(claimed.jobs.first { $0.id == "retrying" })
        #expect(try await queue.retry(retrying.lease, after: .seconds(300), error: "503"))
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty, "nothing due")

        #expect(try await queue.advance(["retrying", "later", "running", "unknown"]) == 2, "the leased and the missing job are left alone")
        let woken = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(Set(woken.ids) == ["retrying", "later"])
        #expect(woken.jobs.first { $0.id == "retrying" }?.attempt == 2, "attempts are kept")
        #expect(try await queue.advance(["retrying"]) == 0, "leased now")
    }
}
