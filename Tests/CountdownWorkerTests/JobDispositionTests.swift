import CountdownDomain
@testable import CountdownWorker
@testable import DelayQueue
import Foundation
import TestSupport
import Testing

@Suite struct JobDispositionTests {
    struct Away: Error {}
    struct Broken: Error {}

    static func decide(_ result: Result<HandlerOutcome, any Error>, attempt: Int = 1) -> JobDisposition {
        JobDisposition.decide(result, attempt: attempt) { $0 is Away }
    }

    @Test func finishedJobsAreAcknowledged() {
        #expect(Self.decide(.success(.done(detail: "sent 3"))).action == .ack)
        #expect(Self.decide(.success(.done(detail: "sent 3"))).outcome == "done")
        let skipped = Self.decide(.success(.skipped(reason: "too_late")))
        #expect(skipped.action == .ack)
        #expect(skipped.outcome == "skipped")
        #expect(skipped.fields["reason"] == "too_late")
    }

    @Test func aRunCancelledByShutdownHandsBackWhatWouldTryAgainAndKeepsWhatFinished() {
        let handBack = JobAction.postpone(after: .zero, error: "worker shut down before the job finished")
        let cancelled = { (result: Result<HandlerOutcome, any Error>) in
            JobDisposition.decide(result, attempt: 2, cancelled: true) { $0 is Away }.action
        }
        #expect(cancelled(.success(.retry(after: .seconds(30), reason: "cancelled"))) == handBack)
        #expect(cancelled(.success(.retry(after: nil, reason: "cancelled"))) == handBack)
        #expect(cancelled(.failure(Broken())) == handBack, "no attempt spent on an error caused by the cancellation")
        #expect(cancelled(.success(.done(detail: "sent 3"))) == .ack, "work finished before the cancellation is kept")
        #expect(Self.decide(.success(.retry(after: nil, reason: "x"))).action == .fail(error: "x"), "not cancelled: as before")
    }

    @Test func aRescheduleGivesTheAttemptBack() {
        let decision = Self.decide(.success(.reschedule(after: .seconds(90), reason: "start window opens later")))
        #expect(decision.action == .postpone(after: .seconds(90), error: nil))
        #expect(decision.outcome == "rescheduled")
    }

    @Test func aRetryAfterIsHonouredAndARetryWithoutOneBacksOff() {
        #expect(Self.decide(.success(.retry(after: .seconds(30), reason: "push_retry"))).action
                == .retry(after: .seconds(30), error: "push_retry"))
        let backoff = Self.decide(.success(.retry(after: nil, reason: "push_retry")))
        #expect(backoff.action == .fail(error: "push_retry"))
        #expect(backoff.outcome == nil, "counted by what the queue does with it")
        #expect(backoff.level == .warn)
    }

    /// An end push refused for a while is retried every few seconds on its own schedule (`EndRetrySchedule`, bounded
    /// by its dismissal window): a dozen retries in its first minute must not use up `JOB_MAX_ATTEMPTS`, or the
    /// job's next failure (or a worker dying while it runs) dead-letters the end early.
    @Test func aRetryOnItsOwnScheduleGivesTheAttemptBack() async throws {
        let decision = Self.decide(.success(.retryOnSchedule(after: .seconds(5), reason: "end_push_retry")), attempt: 7)
        #expect(decision.action == .postpone(after: .seconds(5), error: "end_push_retry"))
        #expect(decision.outcome == "retried")
        #expect(JobDisposition.decide(.success(.retryOnSchedule(after: .seconds(5), reason: "r")), attempt: 2, cancelled: true) { _ in false }.action
                == .postpone(after: .zero, error: "worker shut down before the job finished"))

        let queue = InMemoryDelayQueue(policy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(2), jitter: 0))
        try await queue.enqueue(NewJob(id: "end:s", kind: "end", due: .now))
        for _ in 0..<12 {
            let job = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
            guard case .postpone(let after, let error) = Self.decide(.success(.retryOnSchedule(after: .zero, reason: "end_push_retry")),
                                                                     attempt: job.attempt).action
            else { Issue.record("expected a postpone"); return }
            #expect(try await queue.postpone(job.lease, after: after, error: error))
        }
        let job = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(job.attempt == 1, "twelve scheduled retries spent no attempt")
        guard case .retrying = try await queue.fail(job.lease, error: "Broken()") else {
            Issue.record("a failure after the scheduled retries is dead-lettered early"); return
        }
    }

    @Test func transientErrorsArePostponedWithGrowingWaitsAndOthersFail() {
        #expect(Self.decide(.failure(Away()), attempt: 1).action == .postpone(after: .seconds(2), error: "Away()"))
        #expect(Self.decide(.failure(Away()), attempt: 3).action == .postpone(after: .seconds(8), error: "Away()"))
        #expect(Self.decide(.failure(Away()), attempt: 40).action == .postpone(after: .seconds(30), error: "Away()"))
        let failed = Self.decide(.failure(Broken()))
        #expect(failed.action == .fail(error: "Broken()"))
        #expect(failed.level == .error)
    }

    @Test func aFanOutQueuesItsJobsThenAcknowledges() {
        let pages = [CountdownJob.reminderPage(stream: "s", after: "", through: "u9"), .reminderPage(stream: "s", after: "u9", through: nil)]
        let decision = Self.decide(.success(.fanOut(jobs: pages, detail: "2 pages")))
        #expect(decision.action == .enqueueThenAck(jobs: pages))
        #expect(decision.outcome == "done")
    }

    @Test func workCancelledByShutdownIsHandedBackAtOnce() {
        #expect(Self.decide(.failure(CancellationError())).action == .postpone(after: .zero, error: "worker shut down before the job finished"))
    }

    @Test func anUndecodableJobFailsWithItsReason() {
        #expect(JobDisposition.undecodable("unknown kind \"teleport\"").action == .fail(error: "undecodable: unknown kind \"teleport\""))
    }
}

@Suite struct JobBatchPolicyTests {
    static func job(_ id: String, _ kind: String) -> ClaimedJob {
        ClaimedJob(id: id, kind: kind, payload: [], dueAt: Date(), lease: JobLease(id: id, token: "t", attempt: 1))
    }

    @Test func batchableKindsAreGroupedUpToTheSizeAndOthersRunAlone() {
        let jobs = ["s1", "e1", "s2", "s3", "r1", "s4", "s5"].map { Self.job($0, $0.hasPrefix("s") ? "start" : "end") }
        let groups = JobBatchPolicy(kinds: ["start"], size: 2).group(jobs).map { $0.map(\.id) }
        #expect(groups == [["e1"], ["r1"], ["s1", "s2"], ["s3", "s4"], ["s5"]])
    }

    @Test func noneRunsEveryJobAlone() {
        let jobs = ["s1", "s2"].map { Self.job($0, "start") }
        #expect(JobBatchPolicy.none.group(jobs).map { $0.map(\.id) } == [["s1"], ["s2"]])
        #expect(JobBatchPolicy(kinds: ["start"], size: 1).group(jobs).count == 2)
        #expect(JobBatchPolicy(kinds: ["start"], size: 0).group(jobs).count == 2, "a size below one batches nothing")
    }
}
