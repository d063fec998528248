import BlockingIO
import DelayQueue
import Foundation
import Redis
import TestSupport
import Testing

@Suite struct RedisDelayQueueTests {
    @Test func enqueueClaimAckRoundTrip() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        let payload: [UInt8] = [0, 1, 2, 0, 255] + Array("ğüş".utf8)
        // Bracketed by the server's clock: how long this process takes between the calls (a loaded machine can stall
        // it for seconds) plays no part.
        let before = try await fixture.serverNow()
        try await queue.enqueue(NewJob(id: "start:s1", kind: "start", payload: payload, due: .now))
        let batch = try await queue.claim(max: 10, lease: .seconds(30))
        let after = try await fixture.serverNow()
        let claimed = try #require(batch.jobs.first)
        #expect(batch.jobs.count == 1)
        #expect(claimed.id == "start:s1")
        #expect(claimed.kind == "start")
        #expect(claimed.payload == payload)
        #expect(claimed.attempt == 1)
        let (due, at) = (claimed.dueAt.epochMilliseconds, batch.claimedAt.epochMilliseconds)
        #expect(before <= due && due <= at && at <= after, "due at the enqueue, claimed after it, both on the server's clock")
        #expect(try await queue.stats() == QueueStats(delayed: 0, dueNow: 0, leased: 1, dead: 0, oldestDueLateness: .zero))
        #expect(try await queue.ack([claimed.lease]) == 1)
        #expect(try await queue.ack([claimed.lease]) == 0, "a second ack is a no-op")
        #expect(try await queue.stats() == QueueStats(delayed: 0, dueNow: 0, leased: 0, dead: 0, oldestDueLateness: .zero))
        #expect(try await queue.jobs(ids: ["start:s1"]).isEmpty)
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
    }

    @Test func enqueueIsIdempotentAndReschedulesLaterAndEarlier() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue(job("remind:s1", kind: "reminder", payload: "v1", due: .now))
        try await queue.enqueue(job("remind:s1", kind: "reminder", payload: "v2", due: .after(.seconds(3600))))
        var stats = try await queue.stats()
        #expect(stats.delayed == 1 && stats.dueNow == 0, "one job per id; later due time replaced the first")
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
        let info = try #require(try await queue.jobs(ids: ["remind:s1"])["remind:s1"])
        guard case .waiting(let dueAt) = info.state else { Issue.record("expected waiting, got \(info.state)"); return }
        let now = try await fixture.serverNow()
        #expect(abs(dueAt.epochMilliseconds - (now + 3_600_000)) < 2_000)

        try await queue.enqueue(job("remind:s1", kind: "reminder", payload: "v3", due: .now))
        stats = try await queue.stats()
        #expect(stats.delayed == 0 && stats.dueNow == 1)
        let claimed = try await queue.claim(max: 10, lease: .seconds(30)).jobs
        #expect(claimed.map(\.payload) == [Array("v3".utf8)])
    }

    @Test func bulkEnqueueIsPipelined() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let jobs = (0..<2_500).map { job("bulk:\($0)", kind: "bulk", payload: "p\($0)", due: $0 % 2 == 0 ? .now : .after(.seconds(600))) }
        try await fixture.queue.enqueue(jobs)
        let stats = try await fixture.queue.stats()
        #expect(stats.dueNow == 1_250)
        #expect(stats.delayed == 1_250)
        var seen = Set<String>()
        while true {
            let batch = try await fixture.queue.claim(max: 256, lease: .seconds(30))
            if batch.items.isEmpty { break }
            #expect(batch.items.count <= 256)
            seen.formUnion(batch.ids)
            try await fixture.queue.ack(batch.jobs.map(\.lease))
        }
        #expect(seen.count == 1_250)
    }

    @Test func rejectsMalformedJobsAndArguments() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        await #expect { try await fixture.queue.enqueue(job("", due: .now)) } throws: { ($0 as? DelayQueueError)?.code == .invalidJob }
        await #expect { try await fixture.queue.enqueue(NewJob(id: "x", kind: "", due: .now)) } throws: { ($0 as? DelayQueueError)?.code == .invalidJob }
        await #expect { try await fixture.queue.claim(max: 0, lease: .seconds(1)) } throws: { ($0 as? DelayQueueError)?.code == .invalidArgument }
    }

    @Test func claimNeverTakesMoreThanTheFreeSlots() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        try await fixture.queue.enqueue((0..<10).map { job("slot:\($0)") })
        #expect(try await fixture.queue.claim(max: 3, lease: .seconds(30)).items.count == 3)
        #expect(try await fixture.queue.claim(max: 1, lease: .seconds(30)).items.count == 1)
        #expect(try await fixture.queue.claim(max: 100, lease: .seconds(30)).items.count == 6)
    }

    @Test func concurrentConsumersNeverGetTheSameJob() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let total = 3_000
        try await fixture.queue.enqueue((0..<total).map { job("race:\($0)") })
        let claimed = Locked<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while true {
                        let batch = try await fixture.queue.claim(max: 37, lease: .seconds(60))
                        if batch.items.isEmpty { return }
                        claimed.withLock { $0.append(contentsOf: batch.ids) }
                        try await fixture.queue.ack(batch.jobs.map(\.lease))
                    }
                }
            }
            try await group.waitForAll()
        }
        let ids = claimed.value
        #expect(ids.count == total)
        #expect(Set(ids).count == total)
    }

    @Test func cancelRemovesWaitingJobsAndDisarmsLeasedOnes() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue([job("end:a", due: .after(.seconds(60))), job("end:b")])
        #expect(try await queue.cancel("end:a"))
        #expect(try await queue.cancel("end:a") == false)
        let leased = try #require(try await queue.claim(max: 1, lease: .milliseconds(300)).jobs.first)
        #expect(try await queue.cancel("end:b"))
        #expect(try await queue.ack(leased.lease) == false, "ack of a cancelled job is a no-op")
        #expect(try await queue.retry(leased.lease, after: .zero, error: "x") == false, "and it is never retried")
        #expect(try await queue.fail(leased.lease, error: "x") == .stale)
        // Nothing comes back once the disarmed lease has run out: the claim that takes a marker due after it is
        // the claim that would have taken end:b back.
        let claims = try await claimMarker(queue, dueAfter: .milliseconds(300))
        #expect(claims.dropLast().allSatisfy { $0.items.isEmpty } && claims.last?.ids == ["marker"], "\(claims.map(\.ids))")
        #expect(try await queue.stats() == QueueStats(delayed: 0, dueNow: 0, leased: 0, dead: 0, oldestDueLateness: .zero))
    }

    @Test func reEnqueueWhileLeasedMakesTheLeaseStaleAndKeepsTheNewSchedule() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue(job("start:s9", payload: "old"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        try await queue.enqueue(job("start:s9", payload: "new", due: .now))
        #expect(try await queue.ack(first.lease) == false)
        let second = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(second.payload == Array("new".utf8))
        #expect(second.attempt == 1)
    }

    @Test func aConsumerKilledMidLeaseLosesNothing() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue((0..<5).map { job("crash:\($0)", payload: "p\($0)") })
        let abandoned = try await queue.claim(max: 5, lease: .seconds(1)).jobs
        #expect(abandoned.count == 5)
        #expect(try await queue.claim(max: 5, lease: .seconds(30)).items.isEmpty, "leased jobs are not handed out twice")
        var recovered: [ClaimedJob] = []
        try await waitUntil(timeout: .seconds(15), "expired leases to come back") {
            recovered += try await queue.claim(max: 5, lease: .seconds(30)).jobs
            return recovered.count == 5
        }
        #expect(Set(recovered.map(\.id)) == Set(abandoned.map(\.id)))
        #expect(recovered.allSatisfy { $0.attempt == 2 }, "the lost attempt counts")
        #expect(recovered.map(\.payload).sorted { $0.lexicographicallyPrecedes($1) } == (0..<5).map { Array("p\($0)".utf8) })
        #expect(try await queue.ack(abandoned.map(\.lease)) == 0, "the killed consumer's stale acks are harmless")
        #expect(try await queue.ack(recovered.map(\.lease)) == 5)
    }

    @Test func extendKeepsALongJobLeased() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue(job("long:1"))
        let claimed = try #require(try await queue.claim(max: 1, lease: .milliseconds(300)).jobs.first)
        #expect(try await queue.extend(claimed.lease, by: .seconds(30)))
        // Past the original lease (the marker is due after it) the job is still not handed out again.
        let claims = try await claimMarker(queue, dueAfter: .milliseconds(300))
        #expect(claims.dropLast().allSatisfy { $0.items.isEmpty } && claims.last?.ids == ["marker"], "\(claims.map(\.ids))")
        #expect(try await queue.ack(claimed.lease))
        #expect(try await queue.extend(claimed.lease, by: .seconds(30)) == false)
    }

    @Test func retryAfterAnExplicitDelay() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue(job("push:1"))
        let first = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        let before = try await fixture.serverNow()
        #expect(try await queue.retry(first.lease, after: .milliseconds(1_500), error: "429 Retry-After"))
        let after = try await fixture.serverNow()
        let info = try #require(try await queue.jobs(ids: ["push:1"])["push:1"])
        #expect(info.lastError == "429 Retry-After")
        #expect(info.attempts == 1)
        guard case .waiting(let dueAt) = info.state else { Issue.record("expected waiting"); return }
        #expect(dueAt.epochMilliseconds >= before + 1_500 && dueAt.epochMilliseconds <= after + 1_500)
        let early = try await queue.claim(max: 1, lease: .seconds(30))
        #expect(early.items.isEmpty || early.claimedAt.epochMilliseconds >= dueAt.epochMilliseconds)
        var second: ClaimedJob?
        try await waitUntil(timeout: .seconds(15), "the retry to become due") {
            if !early.items.isEmpty { second = early.jobs.first; return true }
            second = try await queue.claim(max: 1, lease: .seconds(30)).jobs.first
            return second != nil
        }
        #expect(second?.attempt == 2)
        #expect(try await queue.retry(first.lease, after: .zero, error: nil) == false, "the first lease is stale")
    }

    @Test func failBacksOffThenDeadLettersAfterMaxAttempts() async throws {
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(40), maxDelay: .seconds(5), jitter: 0.5)
        let fixture = try QueueFixture(policy: policy)
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue(job("flaky:1", kind: "push", payload: "body"))
        var outcomes: [FailOutcome] = []
        for attempt in 1...3 {
            var claimed: ClaimedJob?
            try await waitUntil(timeout: .seconds(5), "attempt \(attempt) to become due") {
                claimed = try await queue.claim(max: 1, lease: .seconds(30)).jobs.first
                return claimed != nil
            }
            #expect(claimed?.attempt == attempt)
            outcomes.append(try await queue.fail(try #require(claimed).lease, error: "503 UNAVAILABLE #\(attempt)"))
        }
        guard case .retrying(let first) = outcomes[0], case .retrying(let second) = outcomes[1] else {
            Issue.record("expected two retries, got \(outcomes)"); return
        }
        #expect(first >= .milliseconds(20) && first <= .milliseconds(40))
        #expect(second >= .milliseconds(40) && second <= .milliseconds(80))
        #expect(outcomes[2] == .deadLettered)
        #expect(try await queue.claim(max: 1, lease: .seconds(1)).items.isEmpty)

        let dead = try await queue.deadLetters(limit: 10)
        #expect(dead.count == 1)
        #expect(dead.first?.id == "flaky:1")
        #expect(dead.first?.attempts == 3)
        #expect(dead.first?.lastError == "503 UNAVAILABLE #3")
        #expect(dead.first?.kind == "push")
        #expect(dead.first?.payload == Array("body".utf8))
        #expect(try await queue.stats().dead == 1)

        #expect(try await queue.redrive(["flaky:1", "unknown"]) == 1)
        let again = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(again.attempt == 1, "a re-driven job gets fresh attempts")
        #expect(try await queue.fail(again.lease, error: "still down") != .deadLettered)
        #expect(try await queue.cancel("flaky:1"))

        try await queue.enqueue(job("hopeless:1"))
        let hopeless = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first { $0.id == "hopeless:1" })
        _ = try await queue.fail(JobLease(id: hopeless.id, token: hopeless.lease.token, attempt: 3), error: "bad request")
        #expect(try await queue.dropDeadLetters(["hopeless:1"]) == 1)
        #expect(try await queue.jobs(ids: ["hopeless:1"]).isEmpty)
    }

    @Test func backoffGrowsAndIsJittered() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(60), jitter: 0.5)
        var random = SystemRandomNumberGenerator()
        var means: [Double] = []
        for attempt in 1...7 {
            let samples = (0..<200).map { _ in policy.delay(afterAttempt: attempt, using: &random) }
            let full = min(pow(2, Double(attempt - 1)), 60)
            #expect(samples.allSatisfy { $0 >= .milliseconds(Int64(full * 500)) && $0 <= .milliseconds(Int64(full * 1000)) })
            #expect(Set(samples).count > 50, "jittered: attempt \(attempt) delays differ")
            means.append(samples.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }.reduce(0, +) / 200)
        }
        #expect(zip(means, means.dropFirst()).allSatisfy { $0 < $1 }, "grows: \(means)")
        let capped = policy.delay(afterAttempt: 40, using: &random)
        #expect(capped <= .seconds(60) && capped >= .seconds(30))
    }

    @Test func expiredLeaseOnTheLastAttemptBecomesADeadLetter() async throws {
        let fixture = try QueueFixture(policy: RetryPolicy(maxAttempts: 1))
        defer { fixture.close() }
        try await fixture.queue.enqueue(job("once:1"))
        _ = try await fixture.queue.claim(max: 1, lease: .milliseconds(100))
        try await waitUntil(timeout: .seconds(5), "the expired lease to be buried") {
            _ = try await fixture.queue.claim(max: 1, lease: .seconds(1))
            return try await fixture.queue.stats().dead == 1
        }
        #expect(try await fixture.queue.deadLetters(limit: 1).first?.lastError.contains("lease expired") == true)
    }

    @Test func dueTimesFollowTheRedisClockNotTheConsumers() async throws {
        // A consumer whose own clock is minutes off would compute the wrong due jobs; claim takes no time from the
        // consumer at all, and its answers line up with the server's TIME.
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        let serverNow = try await fixture.serverNow()
        let skewedConsumerClock = Date().addingTimeInterval(5 * 60)
        try await queue.enqueue([
            job("future", due: .at(Date(timeIntervalSince1970: Double(serverNow + 60_000) / 1000))),
            job("past", due: .at(Date(timeIntervalSince1970: Double(serverNow - 1_000) / 1000))),
        ])
        let batch = try await queue.claim(max: 10, lease: .seconds(120))
        #expect(batch.ids == ["past"], "the consumer's clock (\(skewedConsumerClock)) plays no part")
        let afterClaim = try await fixture.serverNow()
        #expect(batch.claimedAt.epochMilliseconds >= serverNow && batch.claimedAt.epochMilliseconds <= afterClaim)
        let wake = try #require(batch.nextWakeIn)
        #expect(wake == .milliseconds(serverNow + 60_000 - batch.claimedAt.epochMilliseconds), "next wake on the server's clock: \(wake)")
        let before = try await fixture.serverNow()
        try await queue.enqueue(job("relative", due: .after(.milliseconds(300))))
        let after = try await fixture.serverNow()
        let info = try #require(try await queue.jobs(ids: ["relative"])["relative"])
        guard case .waiting(let dueAt) = info.state else { Issue.record("expected waiting"); return }
        #expect(dueAt.epochMilliseconds >= before + 300 && dueAt.epochMilliseconds <= after + 300, "relative due times use the server's clock")
    }

    @Test func corruptStoredDataIsDeadLetteredWithoutStoppingTheBatch() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue([job("ok:1", payload: "fine"), job("garbled:1"), job("vanished:1"), job("badkind:1")])
        let dataKey = RedisArgument("{\(fixture.namespace)}:q1:data")
        try await fixture.client.command("HSET", dataKey, "garbled:1", "no separator here")
        try await fixture.client.command("HDEL", dataKey, "vanished:1")
        try await fixture.client.command("HSET", dataKey, "badkind:1", RedisArgument(bytes: [0xFF, 0xFE, 0, 1]))
        let batch = try await queue.claim(max: 10, lease: .seconds(30))
        #expect(batch.ids == ["ok:1"])
        var corrupt: [String: String] = [:]
        for case .corrupt(let id, let reason) in batch.items { corrupt[id] = reason }
        #expect(corrupt["garbled:1"]?.contains("format") == true)
        #expect(corrupt["vanished:1"]?.contains("missing") == true)
        #expect(corrupt["badkind:1"]?.contains("UTF-8") == true)
        #expect(Set(try await queue.deadLetters(limit: 10).map(\.id)) == ["garbled:1", "vanished:1", "badkind:1"])
        #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty, "never retried")
        #expect(try await queue.ack(batch.jobs.map(\.lease)) == 1)
    }

    @Test func statsCountEveryState() async throws {
        let fixture = try QueueFixture(policy: RetryPolicy(maxAttempts: 1))
        defer { fixture.close() }
        let queue = fixture.queue
        let startedAt = try await fixture.serverNow()
        try await queue.enqueue([job("a", due: .after(.seconds(600))), job("b", due: .after(.seconds(600))), job("c"), job("d")])
        let claimed = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        _ = try await queue.fail(claimed.lease, error: "boom")
        let enqueuedAt = try await fixture.serverNow()
        try await queue.enqueue(job("e", due: .at(Date(timeIntervalSince1970: Double(enqueuedAt - 2_000) / 1000))))
        _ = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        let stats = try await queue.stats()
        let measuredAt = try await fixture.serverNow()
        #expect(stats.delayed == 2)
        #expect(stats.dueNow == 1)
        #expect(stats.leased == 1)
        #expect(stats.dead == 1)
        #expect(stats.oldestDueLateness >= .zero && stats.oldestDueLateness <= .milliseconds(measuredAt - startedAt), "e (due 2 s ago) was claimed first; d has waited since the start")
    }

    @Test func inspectsJobsByIdAndListsThemByPrefixAndKind() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        try await queue.enqueue([
            job("start:s1", kind: "start", payload: "1", due: .after(.seconds(60))),
            job("reminder:s1", kind: "reminder", due: .after(.seconds(60))),
            job("start:s2", kind: "start"), job("start*odd", kind: "other", due: .after(.seconds(60))),
        ])
        let leased = try #require(try await queue.claim(max: 1, lease: .seconds(30)).jobs.first)
        #expect(leased.id == "start:s2")
        let infos = try await queue.jobs(ids: ["start:s1", "start:s2", "missing"])
        #expect(infos.count == 2)
        #expect(infos["start:s1"]?.kind == "start")
        #expect(infos["start:s1"]?.payload == Array("1".utf8))
        if case .waiting = infos["start:s1"]?.state {} else { Issue.record("start:s1 should be waiting") }
        if case .leased = infos["start:s2"]?.state {} else { Issue.record("start:s2 should be leased") }
        #expect(infos["start:s2"]?.attempts == 1)
        #expect(try await queue.jobIDs(prefix: "start:", kind: nil) == ["start:s1", "start:s2"])
        #expect(try await queue.jobIDs(prefix: "start", kind: "other") == ["start*odd"])
        #expect(try await queue.jobIDs(prefix: "start*", kind: nil) == ["start*odd"], "glob characters are literal")
        #expect(try await queue.jobIDs(prefix: "", kind: "reminder") == ["reminder:s1"])
    }

    @Test func idleWorkerWakesForANewJobAndForTheNextDueTime() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        let clock = ContinuousClock()
        let claimedAt = Locked<[String: ContinuousClock.Instant]>([:])
        let worker = Task {
            while !Task.isCancelled {
                let batch = try await queue.claim(max: 10, lease: .seconds(30))
                for job in batch.jobs { claimedAt.withLock { $0[job.id] = clock.now } }
                try await queue.ack(batch.jobs.map(\.lease))
                if batch.items.isEmpty { try await queue.waitForWork(timeout: batch.idleWait(maxIdle: .seconds(30))) }
            }
        }
        defer { worker.cancel() }
        // Best of three, so a stall of this busy machine in one round does not decide the outcome.
        var wakeLatencies: [Duration] = []
        var delays: [Duration] = []
        for round in 0..<3 {
            try await Task.sleep(for: .milliseconds(300))  // the worker is now asleep with nothing to do
            let started = clock.now
            try await queue.enqueue(job("now:\(round)"))
            try await waitUntil(timeout: .seconds(10), "the sleeping worker to claim the new job") { claimedAt.value["now:\(round)"] != nil }
            wakeLatencies.append(try #require(claimedAt.value["now:\(round)"]) - started)

            let enqueued = clock.now
            try await queue.enqueue(job("later:\(round)", due: .after(.milliseconds(400))))
            try await waitUntil(timeout: .seconds(10), "the delayed job") { claimedAt.value["later:\(round)"] != nil }
            delays.append(try #require(claimedAt.value["later:\(round)"]) - enqueued)
        }
        #expect(wakeLatencies.min()! < .milliseconds(100), "woken by the enqueue, not a poll: \(wakeLatencies)")
        #expect(delays.allSatisfy { $0 >= .milliseconds(390) }, "never early: \(delays)")
        #expect(delays.min()! < .milliseconds(480), "started within tens of ms of its due time: \(delays)")
    }
}
