import BlockingIO
import DelayQueue
import Foundation
import Testing
import TestSupport

/// One set of behavioural tests run against both `RedisDelayQueue` and `InMemoryDelayQueue`: the fake that the
/// dispatcher's unit tests use behaves like the real queue.
@Suite struct QueueConformanceTests {
    @Test(arguments: QueueImplementation.allCases)
    func claimRespectsMaxAndDueTime(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        let now = try await subject.now()
        try await queue.enqueue([
            job("c"), job("d"), job("later", due: .after(.seconds(60))),
            job("a", due: .at(now.addingTimeInterval(-10))), job("b", due: .at(now.addingTimeInterval(-5))),
        ])
        let before = try await queue.stats()
        #expect(before.dueNow == 4 && before.delayed == 1)
        #expect(before.oldestDueLateness >= .milliseconds(9_900) && before.oldestDueLateness < .seconds(12))
        let first = try await queue.claim(max: 2, lease: .seconds(30))
        #expect(first.ids == ["a", "b"], "the most overdue first")
        #expect(first.jobs.allSatisfy { $0.attempt == 1 })
        let second = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(second.ids == ["c", "d"], "never a job that is not due yet")
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
        let stats = try await queue.stats()
        #expect(stats.delayed == 1 && stats.dueNow == 0 && stats.leased == 4 && stats.dead == 0)
        let wake = try #require(second.nextWakeIn)
        #expect(wake > .seconds(25) && wake <= .seconds(30), "the next event is the leases' expiry, not the job due in 60 s")
        await #expect { try await queue.claim(max: 0, lease: .seconds(1)) } throws: {
            ($0 as? DelayQueueError)?.code == .invalidArgument
        }
    }

    @Test(arguments: QueueImplementation.allCases)
    func kindLimitsLeaveTheRestDueForOtherClaimers(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        let now = try await subject.now()
        try await queue.enqueue((1...5).map { job("page\($0)", kind: "reminder_page", due: .at(now.addingTimeInterval(Double($0) - 10))) }
                                + [job("start1", kind: "start")])
        let first = try await queue.claim(max: 10, lease: .seconds(30), limits: ["reminder_page": 2])
        #expect(first.ids == ["page1", "page2", "start1"], "two pages, and every job of other kinds")
        let none = try await queue.claim(max: 10, lease: .seconds(30), limits: ["reminder_page": 0])
        #expect(none.items.isEmpty)
        #expect(try await queue.stats().dueNow == 3, "the pages left over stay due, in order")
        let rest = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(rest.ids == ["page3", "page4", "page5"])
    }

    @Test(arguments: QueueImplementation.allCases)
    func anExpiredLeaseReturnsTheJobAndCountsTheAttempt(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("lost", payload: "p"))
        let first = try await queue.claim(max: 1, lease: .milliseconds(200))
        let abandoned = try #require(first.jobs.first)
        // Within the lease (on the queue's clock) the job is not handed out twice; a stall of this process can make
        // the next claim come after the lease ran out, and then it is the recovery.
        let next = try await queue.claim(max: 1, lease: .seconds(30))
        let leaseEnd = first.claimedAt.addingTimeInterval(0.2)
        #expect(next.items.isEmpty || next.claimedAt >= leaseEnd, "a leased job is not handed out twice")
        var returned = next.jobs.first
        if returned == nil { returned = try await claimOne(queue, "the expired lease to come back") }
        let recovered = try #require(returned)
        #expect(recovered.id == "lost" && recovered.payload == Array("p".utf8))
        #expect(recovered.attempt == 2)
        #expect(try await queue.jobs(ids: ["lost"])["lost"]?.lastError == "lease expired")
        #expect(try await queue.ack(abandoned.lease) == false, "the old lease is stale")
        #expect(try await queue.ack(recovered.lease))
    }

    @Test(arguments: QueueImplementation.allCases)
    func aLeaseExpiringOnTheLastAttemptDeadLetters(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation, policy: RetryPolicy(maxAttempts: 1))
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("last"))
        _ = try #require(try await queue.claim(max: 1, lease: .milliseconds(200)).jobs.first)
        try await waitUntil("the expired lease to be buried") {
            _ = try await queue.claim(max: 1, lease: .seconds(30))
            return try await queue.stats().dead == 1
        }
        let dead = try #require(try await queue.deadLetters(limit: 10).first)
        #expect(dead.id == "last" && dead.attempts == 1)
        #expect(dead.lastError.hasPrefix("lease expired on the last attempt"))
    }

    @Test(arguments: QueueImplementation.allCases)
    func extendKeepsTheJobLeased(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("long"))
        let claimed = try #require(try await queue.claim(max: 1, lease: .milliseconds(300)).jobs.first)
        #expect(try await queue.extend(claimed.lease, by: .seconds(30)))
        guard case .leased(let until) = try await queue.jobs(ids: ["long"])["long"]?.state else {
            Issue.record("expected the job leased")
            return
        }
        #expect(until.timeIntervalSince(try await subject.now()) > 25)
        // Past the original lease (the marker is due after it) nothing comes back.
        let claims = try await claimMarker(queue, dueAfter: .milliseconds(300))
        #expect(claims.dropLast().allSatisfy { $0.items.isEmpty } && claims.last?.ids == ["marker"], "\(claims.map(\.ids))")
        #expect(try await queue.ack(claimed.lease))
        #expect(try await queue.extend(claimed.lease, by: .seconds(30)) == false)
    }

    @Test(arguments: QueueImplementation.allCases)
    func ackFinishesCurrentLeasesInABatch(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue((0..<4).map { job("batch:\($0)") })
        let claimed = try await queue.claim(max: 4, lease: .seconds(30)).jobs
        #expect(claimed.count == 4)
        try await queue.enqueue(job("batch:3"))  // re-enqueued: its lease is stale now
        #expect(try await queue.ack(claimed.map(\.lease)) == 3)
        #expect(try await queue.ack(claimed.map(\.lease)) == 0, "a second ack is a no-op")
        #expect(try await queue.jobs(ids: claimed.map(\.id)).keys.sorted() == ["batch:3"])
        let stats = try await queue.stats()
        #expect(stats.dueNow == 1 && stats.leased == 0)
    }

    @Test(arguments: QueueImplementation.allCases)
    func retryAfterKeepsTheAttemptCountAndWaits(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("push"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        let before = try await subject.now()
        #expect(try await queue.retry(first.lease, after: .seconds(1), error: "429 Retry-After"))
        let info = try #require(try await queue.jobs(ids: ["push"])["push"])
        #expect(info.attempts == 1 && info.lastError == "429 Retry-After")
        guard case .waiting(let dueAt) = info.state else {
            Issue.record("expected waiting, got \(info.state)")
            return
        }
        #expect(dueAt.timeIntervalSince(before) >= 0.99 && dueAt.timeIntervalSince(before) < 2)
        #expect(try await queue.claim(max: 1, lease: .seconds(30)).items.isEmpty)
        let second = try await claimOne(queue, "the retry to become due")
        #expect(second.attempt == 2)
        #expect(try await queue.retry(first.lease, after: .zero, error: nil) == false, "the first lease is stale")
    }

    @Test(arguments: QueueImplementation.allCases)
    func postponeGivesTheAttemptBack(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("wait"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(try await queue.postpone(first.lease, after: .zero, error: "redis down"))
        let info = try #require(try await queue.jobs(ids: ["wait"])["wait"])
        #expect(info.attempts == 0 && info.lastError == "redis down")
        let again = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(again.attempt == 1, "the postponed run did not count")
        #expect(try await queue.postpone(first.lease, after: .zero, error: nil) == false, "the first lease is stale")
    }

    @Test(arguments: QueueImplementation.allCases)
    func failRetriesWithBackoffThenDeadLettersAndRedrives(_ implementation: QueueImplementation) async throws {
        let policy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(100), maxDelay: .seconds(5), jitter: 0)
        let subject = try QueueSubject(implementation, policy: policy)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue(job("flaky", kind: "push", payload: "body"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(try await queue.fail(first.lease, error: "503 #1") == .retrying(after: .milliseconds(100)))
        #expect(try await queue.jobs(ids: ["flaky"])["flaky"]?.lastError == "503 #1")
        let second = try await claimOne(queue, "the backoff to pass")
        #expect(second.attempt == 2)
        #expect(try await queue.fail(second.lease, error: "503 #2") == .deadLettered)
        #expect(try await queue.claim(max: 1, lease: .seconds(30)).items.isEmpty)
        let dead = try await queue.deadLetters(limit: 10)
        #expect(dead.map(\.id) == ["flaky"])
        #expect(dead.first?.attempts == 2 && dead.first?.lastError == "503 #2")
        #expect(dead.first?.kind == "push" && dead.first?.payload == Array("body".utf8))
        guard case .dead = try await queue.jobs(ids: ["flaky"])["flaky"]?.state else {
            Issue.record("expected a dead letter")
            return
        }
        #expect(try await queue.stats().dead == 1)
        #expect(try await queue.fail(second.lease, error: "again") == .stale, "a dead letter's lease is stale")
        #expect(try await queue.redrive(["flaky", "unknown"]) == 1)
        let revived = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(revived.attempt == 1, "a re-driven job gets fresh attempts")
        try await queue.ack(revived.lease)
        try await queue.enqueue(job("hopeless"))
        let hopeless = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        _ = try await queue.fail(JobLease(id: "hopeless", token: hopeless.lease.token, attempt: 2), error: "bad request")
        #expect(try await queue.dropDeadLetters(["hopeless", "flaky"]) == 1)
        #expect(try await queue.stats() == QueueStats(delayed: 0, dueNow: 0, leased: 0, dead: 0, oldestDueLateness: .zero))
        #expect(try await queue.claim(max: 1, lease: .seconds(30)).nextWakeIn == nil, "nothing waiting or leased")
    }

    @Test(arguments: QueueImplementation.allCases)
    func enqueueAndCancelReachDeadLetters(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation, policy: RetryPolicy(maxAttempts: 1))
        defer { subject.close() }
        let queue = subject.queue
        for id in ["revived", "removed"] {
            try await queue.enqueue(job(id))
            let claimed = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
            #expect(try await queue.fail(claimed.lease, error: "dead") == .deadLettered)
        }
        #expect(try await queue.claim(max: 1, lease: .seconds(30)).nextWakeIn == nil, "dead letters never wake anyone")
        try await queue.enqueue(job("revived", payload: "again"))
        #expect(try await queue.cancel("removed"))
        #expect(try await queue.deadLetters(limit: 10).isEmpty)
        let revived = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(revived.id == "revived" && revived.attempt == 1 && revived.payload == Array("again".utf8))
    }

    @Test(arguments: QueueImplementation.allCases)
    func staleLeaseOperationsAreRefused(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        try await queue.enqueue([job("replaced", payload: "old"), job("cancelled")])
        let leases = try await queue.claim(max: 2, lease: .seconds(30)).jobs.map(\.lease)
        try await queue.enqueue(job("replaced", payload: "new", due: .after(.seconds(60))))
        #expect(try await queue.cancel("cancelled"))
        for lease in leases {
            #expect(try await queue.ack(lease) == false)
            #expect(try await queue.retry(lease, after: .zero, error: nil) == false)
            #expect(try await queue.postpone(lease, after: .zero, error: nil) == false)
            #expect(try await queue.extend(lease, by: .seconds(30)) == false)
            #expect(try await queue.fail(lease, error: "x") == .stale)
        }
        let replaced = try #require(try await queue.jobs(ids: ["replaced"])["replaced"])
        #expect(replaced.attempts == 0 && replaced.payload == Array("new".utf8))
        #expect(try await queue.jobs(ids: ["cancelled"]).isEmpty)
        let stats = try await queue.stats()
        #expect(stats.delayed == 1 && stats.leased == 0 && stats.dead == 0)
    }

    @Test(arguments: QueueImplementation.allCases)
    func waitForWorkWakesOnNewWorkAndOtherwiseTimesOut(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        let clock = ContinuousClock()
        // The first wait may return early (the Redis queue has just subscribed and may have missed a wake-up);
        // later ones with nothing happening last their timeout.
        try await queue.waitForWork(timeout: .milliseconds(200))
        var started = clock.now
        try await queue.waitForWork(timeout: .milliseconds(200))
        #expect(clock.now - started >= .milliseconds(150) && clock.now - started < .seconds(5))

        started = clock.now
        let woken = Locked(false)
        let waiter = Task {
            try await queue.waitForWork(timeout: .seconds(20))
            woken.withLock { $0 = true }
        }
        // Enqueue until the waiter has returned: a job enqueued before it started waiting would not wake it.
        var round = 0
        try await waitUntil(every: .milliseconds(50), "the waiter to wake") {
            round += 1
            try await queue.enqueue(job("wake:\(round)"))
            return woken.value
        }
        try await waiter.value
        #expect(clock.now - started < .seconds(10), "woken by the work, not by the 20 s timeout")
    }

    /// Counts by kind without listing ids: waiting, delayed and running jobs, over more data-hash entries than one
    /// step of the Redis script reads.
    @Test(arguments: QueueImplementation.allCases)
    func jobCountsByKindCountWithoutListing(_ implementation: QueueImplementation) async throws {
        let subject = try QueueSubject(implementation)
        defer { subject.close() }
        let queue = subject.queue
        #expect(try await queue.jobCountsByKind().isEmpty)
        let jobs = (0..<12_000).map { n in
            job("\(["start", "reminder", "end"][n % 3]):\(n)", kind: ["start", "reminder", "end"][n % 3],
                due: n % 2 == 0 ? .now : .after(.seconds(600)))
        }
        for start in stride(from: 0, to: jobs.count, by: 1000) { try await queue.enqueue(Array(jobs[start..<start + 1000])) }
        _ = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(try await queue.jobCountsByKind() == ["start": 4000, "reminder": 4000, "end": 4000])
        try await queue.cancel(["end:5", "end:11"])
        #expect(try await queue.jobCountsByKind() == ["start": 4000, "reminder": 4000, "end": 3998])
    }
}

/// Claims until the queue hands out one job (letting the queue's clock run), for at most 10 s.
private func claimOne(_ queue: any DelayQueue, _ what: String) async throws -> ClaimedJob {
    var claimed: ClaimedJob?
    try await waitUntil(what) {
        claimed = try await queue.claim(max: 1, lease: .seconds(30)).jobs.first
        return claimed != nil
    }
    return try #require(claimed)
}
