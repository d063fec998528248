import BlockingIO
import CountdownDomain
@testable import CountdownWorker
import DelayQueue
import Foundation
@testable import Lifecycle
import Telemetry
import Testing
import TestSupport

/// The dispatcher on `InMemoryDelayQueue` with a scripted runner: every queue action it takes, without I/O.
@Suite struct DispatcherTests {
    struct Away: Error {}
    struct Broken: Error {}

    /// Answers each job with `answer`, records every call (the jobs run together) and the most calls running at
    /// once, and holds calls at `gate` when one is given.
    final class ScriptedRunner: JobRunner {
        let calls = Locked([[CountdownJob]]())
        let running = Locked((now: 0, most: 0))
        let answer: @Sendable (CountdownJob) -> Result<HandlerOutcome, any Error>
        let gate: AsyncGate?

        init(gate: AsyncGate? = nil, answer: @escaping @Sendable (CountdownJob) -> Result<HandlerOutcome, any Error>) {
            self.gate = gate
            self.answer = answer
        }

        func run(_ jobs: [CountdownJob]) async -> [Result<HandlerOutcome, any Error>] {
            running.withLock { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
            calls.withLock { $0.append(jobs) }
            await gate?.pass()
            running.withLock { $0.now -= 1 }
            return jobs.map(answer)
        }
    }

    /// A running dispatcher and what it works on.
    struct Harness {
        let queue: InMemoryDelayQueue
        let runner: ScriptedRunner
        let dispatcher: Dispatcher
        let shutdown = ShutdownSignal()
        let metrics = WorkerMetrics()
        let task: Task<Void, any Error>

        init(maxAttempts: Int = 3, lease: Duration = .seconds(30), drain: Duration = .seconds(5), batching: JobBatchPolicy = .none,
             kindLimits: [String: Int] = [:], clock: @escaping @Sendable () -> Date = { Date() }, runner: ScriptedRunner) {
            queue = InMemoryDelayQueue(policy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: .seconds(2), jitter: 0), clock: clock)
            self.runner = runner
            dispatcher = Dispatcher(queue: queue, runner: runner, concurrency: 8, lease: lease, drain: drain, batching: batching,
                                    kindLimits: kindLimits, transient: { $0 is Away }, metrics: metrics, logger: Logger(level: .error, sink: CapturingLogSink()))
            let dispatcher = self.dispatcher
            let shutdown = self.shutdown
            task = Task { try await dispatcher.run(shutdown: shutdown) }
        }

        func enqueue(_ jobs: [CountdownJob], due: JobDue = .now) async throws {
            try await queue.enqueue(jobs.map { NewJob(id: $0.id, kind: $0.kind.rawValue, payload: $0.payload, due: due) })
        }

        func info(_ job: CountdownJob) async throws -> JobInfo? {
            try await queue.jobs(ids: [job.id])[job.id]
        }

        /// Waits until the job is no longer leased (settled one way or another), then returns what the queue holds.
        func settled(_ job: CountdownJob) async throws -> JobInfo? {
            try await waitUntil("\(job.id) settled") {
                guard let info = try await info(job) else { return true }
                if case .leased = info.state { return false }
                return runner.calls.value.contains { $0.contains(job) }
            }
            return try await info(job)
        }

        func stop() async throws {
            shutdown.trigger()
            try await task.value
        }
    }

    static func waitingDue(_ info: JobInfo?) -> Date? {
        if case .waiting(let due)? = info?.state { return due }
        return nil
    }

    @Test func finishedJobsAreAcknowledgedAndStartsOfOneClaimRunTogether() async throws {
        let runner = ScriptedRunner { _ in .success(.done(detail: "ok")) }
        let harness = Harness(batching: JobBatchPolicy(kinds: ["start"], size: 32), runner: runner)
        let starts = (1...5).map { CountdownJob.start(stream: "s\($0)") }
        try await harness.enqueue(starts + [.end(stream: "e1")])
        try await waitUntil("every job acknowledged") { try await harness.queue.jobs(ids: (starts + [.end(stream: "e1")]).map(\.id)).isEmpty }
        try await harness.stop()
        let calls = runner.calls.value
        #expect(calls.contains([.end(stream: "e1")]))
        #expect(calls.filter { $0.allSatisfy { $0.kind == .start } }.flatMap { $0 }.count == 5)
        #expect(calls.count < 6, "the starts of one claim share a run")
    }

    @Test func theLeasesOfJobsJustClaimedArePublishedBeforeTheyFinish() async throws {
        let gate = AsyncGate()
        let queue = InMemoryDelayQueue()
        let runner = ScriptedRunner(gate: gate) { _ in .success(.done(detail: "ok")) }
        let dispatcherRef = Locked<Dispatcher?>(nil)
        let published = Locked([[String]]())
        let dispatcher = Dispatcher(queue: queue, runner: runner, concurrency: 8, drain: .seconds(5), metrics: WorkerMetrics(),
                                    logger: Logger(level: .error, sink: CapturingLogSink()), onClaimed: {
            let held = dispatcherRef.withLock { $0?.heldLeases.map(\.id) ?? [] }
            published.withLock { $0.append(held.sorted()) }
        })
        dispatcherRef.withLock { $0 = dispatcher }
        let shutdown = ShutdownSignal()
        let task = Task { try await dispatcher.run(shutdown: shutdown) }
        let job = CountdownJob.end(stream: "e1")
        try await queue.enqueue(NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: .now))
        try await waitUntil("the claim published") { !published.value.isEmpty }
        #expect(published.value.first == [job.id], "published while the job still runs")
        gate.open()
        try await waitUntil("the job acknowledged") { try await queue.jobs(ids: [job.id]).isEmpty }
        shutdown.trigger()
        try await task.value
    }

    @Test func aFanOutQueuesItsJobsForAnyWorkerAndIsAcknowledged() async throws {
        let pages = [CountdownJob.reminderPage(stream: "big", after: "", through: "u5"), .reminderPage(stream: "big", after: "u5", through: nil)]
        let runner = ScriptedRunner { job in
            if case .reminder = job { return .success(.fanOut(jobs: pages, detail: "2 pages")) }
            return .success(.done(detail: "page sent"))
        }
        let harness = Harness(runner: runner)
        try await harness.enqueue([.reminder(stream: "big")])
        try await waitUntil("both pages ran") { Set(runner.calls.value.flatMap { $0 }).isSuperset(of: pages) }
        try await waitUntil("everything acknowledged") {
            try await harness.queue.jobs(ids: ([CountdownJob.reminder(stream: "big")] + pages).map(\.id)).isEmpty
        }
        try await harness.stop()
    }

    /// A reminder job run again after its acknowledgement was lost finds its first run's pages still live: it
    /// queues no second set (other bounds, the same users) and is acknowledged as skipped.
    @Test func aFanOutIsWithheldWhileItsStreamsPagesAreStillLive() async throws {
        let earlier = CountdownJob.reminderPage(stream: "big", after: "u2", through: nil)
        let pages = [CountdownJob.reminderPage(stream: "big", after: "", through: "u5"), .reminderPage(stream: "big", after: "u5", through: nil)]
        let runner = ScriptedRunner { job in
            if case .reminder = job { return .success(.fanOut(jobs: pages, detail: "2 pages")) }
            return .success(.done(detail: "page sent"))
        }
        let harness = Harness(runner: runner)
        try await harness.enqueue([earlier], due: .after(.seconds(600)))
        try await harness.enqueue([.reminder(stream: "big")])
        let reminder = CountdownJob.reminder(stream: "big")
        try await waitUntil("the reminder job acknowledged") {
            guard runner.calls.value.contains(where: { $0.contains(reminder) }) else { return false }
            return try await harness.info(reminder) == nil
        }
        try await harness.stop()
        #expect(try await harness.queue.jobs(ids: pages.map(\.id)).isEmpty)
        #expect(Self.waitingDue(try await harness.info(earlier)) != nil)
        #expect(!runner.calls.value.flatMap { $0 }.contains { pages.contains($0) })
        #expect(harness.metrics.skips.value(labels: "reminder", "pages_in_flight", "any") == 1)
    }

    /// Only live pages of the same stream hold a fan-out back: a dead-lettered page of the stream (its users are
    /// paged again) and a live page of a stream whose id starts the same way do not.
    @Test func deadPagesAndOtherStreamsPagesDoNotHoldAFanOutBack() async throws {
        let dead = CountdownJob.reminderPage(stream: "big", after: "zz", through: nil)
        let other = CountdownJob.reminderPage(stream: "big2", after: "", through: nil)
        let pages = [CountdownJob.reminderPage(stream: "big", after: "", through: "u5"), .reminderPage(stream: "big", after: "u5", through: nil)]
        let runner = ScriptedRunner { job in
            if job == dead { return .failure(Broken()) }
            if case .reminder = job { return .success(.fanOut(jobs: pages, detail: "2 pages")) }
            return .success(.done(detail: "page sent"))
        }
        let harness = Harness(maxAttempts: 1, runner: runner)
        try await harness.enqueue([dead])
        try await waitUntil("the dead page") { try await harness.queue.deadLetters(limit: 10).contains { $0.id == dead.id } }
        try await harness.enqueue([other], due: .after(.seconds(600)))
        try await harness.enqueue([.reminder(stream: "big")])
        try await waitUntil("both new pages ran") { Set(runner.calls.value.flatMap { $0 }).isSuperset(of: pages) }
        try await harness.stop()
    }

    @Test func aRescheduleComesBackLaterWithItsAttemptGivenBack() async throws {
        let runner = ScriptedRunner { _ in .success(.reschedule(after: .seconds(120), reason: "start window opens later")) }
        let harness = Harness(runner: runner)
        let job = CountdownJob.start(stream: "later")
        let before = Date()
        try await harness.enqueue([job])
        let info = try await harness.settled(job)
        try await harness.stop()
        let due = try #require(Self.waitingDue(info))
        #expect(due >= before.addingTimeInterval(119))
        #expect(info?.attempts == 0)
    }

    @Test func aRetryAfterSpendsTheAttemptAndWaitsAsAsked() async throws {
        let runner = ScriptedRunner { _ in .success(.retry(after: .seconds(45), reason: "push_retry")) }
        let harness = Harness(runner: runner)
        let job = CountdownJob.reminder(stream: "busy")
        let before = Date()
        try await harness.enqueue([job])
        let info = try await harness.settled(job)
        try await harness.stop()
        let due = try #require(Self.waitingDue(info))
        #expect(due >= before.addingTimeInterval(44))
        #expect(info?.attempts == 1)
        #expect(info?.lastError == "push_retry")
    }

    @Test func aTransientErrorIsPostponedWithoutSpendingAttempts() async throws {
        let runner = ScriptedRunner { _ in .failure(Away()) }
        let harness = Harness(maxAttempts: 1, runner: runner)
        let job = CountdownJob.end(stream: "db-away")
        try await harness.enqueue([job])
        let info = try await harness.settled(job)
        try await harness.stop()
        #expect(Self.waitingDue(info) != nil, "not dead-lettered even with one attempt allowed")
        #expect(info?.attempts == 0)
    }

    @Test func aFailingJobIsDeadLetteredAfterItsLastAttempt() async throws {
        let runner = ScriptedRunner { _ in .failure(Broken()) }
        let harness = Harness(maxAttempts: 1, runner: runner)
        let job = CountdownJob.expire(stream: "bad")
        try await harness.enqueue([job])
        try await waitUntil("dead letter") { try await harness.queue.deadLetters(limit: 10).contains { $0.id == job.id } }
        try await harness.stop()
        let dead = try await harness.queue.deadLetters(limit: 10).first { $0.id == job.id }
        #expect(dead?.lastError == "Broken()")
    }

    @Test func anUndecodableJobNeverReachesTheRunnerAndIsDeadLettered() async throws {
        let runner = ScriptedRunner { _ in .success(.done(detail: "ok")) }
        let harness = Harness(maxAttempts: 1, runner: runner)
        try await harness.queue.enqueue([NewJob(id: "teleport:x", kind: "teleport", payload: Array("{}".utf8), due: .now)])
        try await waitUntil("dead letter") { try await harness.queue.deadLetters(limit: 10).contains { $0.id == "teleport:x" } }
        try await harness.stop()
        #expect(runner.calls.value.isEmpty)
        #expect(try await harness.queue.deadLetters(limit: 10).first?.lastError.hasPrefix("undecodable:") == true)
    }

    @Test func aLongJobKeepsItsLeaseWhileItRuns() async throws {
        // The queue's clock moves only when the test moves it: never by a whole lease, and each time only once the
        // dispatcher has extended the lease to a whole one from the queue's now. A stall of this process (a loaded
        // machine) cannot let the lease run out meanwhile; without extension it runs out in the second step.
        let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        let gate = AsyncGate()
        let runner = ScriptedRunner(gate: gate) { _ in .success(.done(detail: "ok")) }
        let harness = Harness(lease: .milliseconds(300), clock: { now.value }, runner: runner)
        let job = CountdownJob.update(stream: "slow")
        try await harness.enqueue([job])
        try await waitUntil("running") { !runner.calls.value.isEmpty }
        for step in 1...5 {  // a second of the queue's time, more than three leases: only extension keeps it
            now.withLock { $0 = $0.addingTimeInterval(0.2) }
            try await waitUntil("the lease extended in step \(step)") {
                guard case .leased(let until)? = try await harness.info(job)?.state else { return false }
                return until.timeIntervalSince(now.value) > 0.25
            }
        }
        let stolen = try await harness.queue.claim(max: 10, lease: .seconds(30))
        #expect(stolen.items.isEmpty, "another worker cannot claim a job whose runner is alive")
        gate.open()
        try await waitUntil("acknowledged") { try await harness.info(job) == nil }
        try await harness.stop()
    }

    /// Sends (records) every few milliseconds until its task is cancelled, noting the job's state in the queue at
    /// every send and when it stops.
    final class SendingRunner: JobRunner {
        struct Send: Sendable { var handedBack: Bool }
        let queue: InMemoryDelayQueue
        let sends = Locked([Send]())
        let stoppedWhileLeased = Locked<Bool?>(nil)

        init(queue: InMemoryDelayQueue) { self.queue = queue }

        func handedBack(_ job: CountdownJob) async -> Bool {
            guard let info = try? await queue.jobs(ids: [job.id])[job.id] else { return true }
            if case .leased = info.state { return false }
            return true
        }

        func run(_ jobs: [CountdownJob]) async -> [Result<HandlerOutcome, any Error>] {
            while !Task.isCancelled {
                let back = await handedBack(jobs[0])
                sends.withLock { $0.append(Send(handedBack: back)) }
                try? await Task.sleep(for: .milliseconds(10))
            }
            let back = await handedBack(jobs[0])
            stoppedWhileLeased.withLock { $0 = !back }
            return jobs.map { _ in .success(.retry(after: .seconds(1), reason: "cancelled")) }
        }
    }

    @Test func shutdownCancelsWhatDidNotFinishWithinTheDrainAndHandsItBackOnceStopped() async throws {
        let queue = InMemoryDelayQueue()
        let runner = SendingRunner(queue: queue)
        let dispatcher = Dispatcher(queue: queue, runner: runner, concurrency: 8, drain: .milliseconds(200), metrics: WorkerMetrics(),
                                    logger: Logger(level: .error, sink: CapturingLogSink()))
        let shutdown = ShutdownSignal()
        let task = Task { try await dispatcher.run(shutdown: shutdown) }
        let job = CountdownJob.reminder(stream: "long")
        try await queue.enqueue(NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: .now))
        try await waitUntil("sending") { !runner.sends.value.isEmpty }
        shutdown.trigger()
        try await task.value
        #expect(runner.stoppedWhileLeased.value == true, "the job was cancelled and stopped before its lease was handed back")
        #expect(runner.sends.value.allSatisfy { !$0.handedBack }, "nothing was sent after the hand-back")
        let info = try await queue.jobs(ids: [job.id])[job.id]
        #expect(Self.waitingDue(info).map { $0 <= Date() } == true, "due again at once for another worker")
        #expect(info?.attempts == 0, "a shutdown does not spend an attempt")
    }

    @Test func aJobThatIgnoresCancellationKeepsItsLease() async throws {
        let gate = AsyncGate()
        let queue = InMemoryDelayQueue()
        let runner = ScriptedRunner(gate: gate) { _ in .success(.done(detail: "ok")) }
        let log = CapturingLogSink()
        let dispatcher = Dispatcher(queue: queue, runner: runner, concurrency: 8, drain: .milliseconds(100), cancelGrace: .milliseconds(100),
                                    metrics: WorkerMetrics(), logger: Logger(level: .error, sink: log))
        let shutdown = ShutdownSignal()
        let task = Task { try await dispatcher.run(shutdown: shutdown) }
        let job = CountdownJob.reminder(stream: "stuck")
        try await queue.enqueue(NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: .now))
        try await waitUntil("running") { !runner.calls.value.isEmpty }
        shutdown.trigger()
        try await waitUntil("past the drain and the cancel grace") { log.lines.contains { $0.contains("did not stop after cancellation") } }
        let info = try await queue.jobs(ids: [job.id])[job.id]
        guard case .leased? = info?.state else {
            Issue.record("a job that may still send is not handed back: \(String(describing: info?.state))")
            gate.open()
            return
        }
        gate.open()
        try await task.value
        #expect(try await queue.jobs(ids: [job.id])[job.id] == nil, "it finished after all and was acknowledged")
    }

    @Test func aLimitedKindTakesNoMoreThanItsLimitAndLeavesTheRestDue() async throws {
        let gate = AsyncGate()
        let runner = ScriptedRunner(gate: gate) { _ in .success(.done(detail: "ok")) }
        let harness = Harness(kindLimits: ["reminder_page": 2], runner: runner)
        let pages = (1...6).map { CountdownJob.reminderPage(stream: "big", after: "u\($0)", through: nil) }
        try await harness.enqueue(pages + [.end(stream: "e1")])
        try await waitUntil("two pages and the end job running") { runner.calls.value.count == 3 }
        // A job enqueued now runs in a free slot: the claim that takes it leaves the pages due.
        try await harness.enqueue([.end(stream: "e2")])
        try await waitUntil("the later end job running") { runner.calls.value.contains([.end(stream: "e2")]) }
        #expect(runner.calls.value.count == 4, "free slots do not take more pages")
        #expect(try await harness.queue.stats().dueNow == 4, "the other pages wait in the queue for other workers")
        gate.open()
        try await waitUntil("every page ran") { try await harness.queue.jobs(ids: pages.map(\.id)).isEmpty }
        try await harness.stop()
    }

    @Test func neverMoreJobsInFlightThanSlots() async throws {
        let gate = AsyncGate()
        let runner = ScriptedRunner(gate: gate) { _ in .success(.done(detail: "ok")) }
        let harness = Harness(runner: runner)
        let jobs = (1...20).map { CountdownJob.end(stream: "e\($0)") }
        try await harness.enqueue(jobs)
        try await waitUntil("slots full") { runner.calls.value.count == 8 }
        #expect(try await harness.queue.stats().leased == 8)
        gate.open()
        try await waitUntil("all done") { try await harness.queue.jobs(ids: jobs.map(\.id)).isEmpty }
        try await harness.stop()
        #expect(runner.calls.value.count == 20)
        #expect(runner.running.value.most == 8, "concurrency is 8, never more jobs running at once")
    }
}
