import BlockingIO
import CountdownDomain
@testable import CountdownWorker
import DelayQueue
import Foundation
import Redis
import Telemetry
import Testing
import TestSupport

/// The wake of end jobs waiting for the push service's recovery, on the test Redis and an in-memory queue.
@Suite struct EndRecoveryWakeTests {
    struct Subject {
        let redis: RedisClient
        let queue = InMemoryDelayQueue()
        let accepted = Locked(0)
        let wake: EndRecoveryWake

        init() throws {
            redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 2)
            let accepted = self.accepted
            wake = EndRecoveryWake(redis: redis, namespace: TestEnvironment.uniqueName("wake"), queue: queue, accepted: { accepted.value },
                                   metrics: WorkerMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
        }

        /// The job, enqueued and claimed: running.
        func running(_ job: CountdownJob) async throws -> JobLease {
            try await queue.enqueue(NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: .now))
            return try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first).lease
        }

        func dueNow(_ job: CountdownJob) async throws -> Bool {
            guard case .waiting(let due)? = try await queue.jobs(ids: [job.id])[job.id]?.state else { return false }
            return due <= Date()
        }
    }

    @Test func aRefusedEndIsDueAtOnceWhenThePushServiceAcceptsAgain() async throws {
        let subject = try Subject()
        defer { subject.redis.close() }
        let job = CountdownJob.end(stream: "s1")
        let lease = try await subject.running(job)
        await subject.wake.awaitRecovery(job, notBefore: .zero)
        #expect(try await subject.queue.retry(lease, after: .seconds(30), error: "end_push_retry"))
        #expect(try await subject.wake.wakeOnce() == 0, "nothing accepted since the last look")
        subject.accepted.withLock { $0 += 1 }
        #expect(try await subject.wake.wakeOnce() == 1)
        #expect(try await subject.dueNow(job))
    }

    /// An end job registers while it still runs, and hands itself back with its backoff a moment later: a recovery
    /// seen in between must not be lost (the job would wait out its backoff, 30 s and more, instead of 5 s).
    @Test func aJobStillRunningWhenThePushServiceRecoversIsWokenOnceItHandsItselfBack() async throws {
        let subject = try Subject()
        defer { subject.redis.close() }
        let job = CountdownJob.end(stream: "s2")
        let lease = try await subject.running(job)
        await subject.wake.awaitRecovery(job, notBefore: .zero)
        subject.accepted.withLock { $0 += 1 }
        #expect(try await subject.wake.wakeOnce() == 0, "a running job is left alone")
        #expect(try await subject.queue.retry(lease, after: .seconds(30), error: "end_push_retry"))
        #expect(try await subject.wake.wakeOnce() == 1, "the next look wakes it, though no push was accepted since")
        #expect(try await subject.dueNow(job))
        #expect(try await subject.wake.wakeOnce() == 0, "once")
    }
}
