import BlockingIO
import CountdownDomain
import DelayQueue
import Foundation
import Lifecycle
import Telemetry

/// Claims due jobs, never more than its free slots, runs them (grouped by its batch policy) as child tasks of a
/// group it owns, and settles each on the queue as `JobDisposition` decides. Leases of running jobs are extended;
/// on shutdown it stops claiming, lets running jobs finish within the drain time, then cancels the rest: a cancelled
/// job sends nothing more and hands its lease back for another worker.
public final class Dispatcher: Service {
    public let name = "dispatcher"
    private let queue: any DelayQueue
    private let runner: any JobRunner
    private let concurrency: Int
    private let lease: Duration
    private let drain: Duration
    private let batching: JobBatchPolicy
    private let kindLimits: [String: Int]
    private let withheldKinds: @Sendable () -> Set<String>
    private let transient: @Sendable (any Error) -> Bool
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let onClaimed: @Sendable () async -> Void
    private let inFlight = Locked([String: (lease: JobLease, kind: String)]())
    private let startedThrough = Locked(0)
    private let slotFreed = Doorbell()
    private let cancelGrace: Duration

    /// - Parameters:
    ///   - batching: which claimed jobs share one run (each still takes a slot and is settled on its own).
    ///   - kindLimits: at most this many jobs of a kind in flight on this worker (the rest stay in the queue for
    ///     other workers), for work handed out as many jobs at once, such as reminder pages.
    ///   - withheldKinds: kinds this worker claims none of for now (the restore guard's hold); asked before every claim.
    ///   - transient: whether an error means a dependency was away (the job is postponed without spending an attempt).
    ///   - drain: how long running jobs may finish after shutdown; then they are cancelled.
    ///   - cancelGrace: how long cancelled jobs get to stop and hand themselves back.
    ///   - onClaimed: called after jobs were claimed and started (the heartbeat publishes the leases held).
    init(queue: any DelayQueue, runner: any JobRunner, concurrency: Int, lease: Duration = .seconds(60), drain: Duration,
         cancelGrace: Duration = .seconds(3),
         batching: JobBatchPolicy = .none, kindLimits: [String: Int] = [:], withheldKinds: @escaping @Sendable () -> Set<String> = { [] },
         transient: @escaping @Sendable (any Error) -> Bool = BlockingIO.isTransient,
         metrics: WorkerMetrics, logger: Logger, onClaimed: @escaping @Sendable () async -> Void = {}) {
        self.queue = queue
        self.runner = runner
        self.concurrency = concurrency
        self.lease = lease
        self.drain = drain
        self.cancelGrace = cancelGrace
        self.batching = batching
        self.kindLimits = kindLimits
        self.withheldKinds = withheldKinds
        self.transient = transient
        self.onClaimed = onClaimed
        self.metrics = metrics
        self.logger = logger.with(["component": "dispatcher"])
        metrics.slots.set(Double(concurrency), labels: "total")
    }

    public var busySlots: Int { inFlight.withLock { $0.count } }

    /// The leases of the jobs running now (published with the heartbeat, so the fleet can take them over).
    public var heldLeases: [JobLease] { inFlight.withLock { $0.values.map(\.lease) } }

    /// The lease token of the latest claim whose jobs are all among `heldLeases` (or already done): read it before
    /// `heldLeases`, and the queue's claim log up to it is covered by the leases read.
    public var claimedThrough: Int { startedThrough.withLock { $0 } }

    public func run(shutdown: ShutdownSignal) async throws {
        // Every job runs as a child of this group, beside the lease extender: at the drain deadline the group is
        // cancelled, so a job stops sending before its lease is handed back, and nothing outlives `run`.
        let extender = LeaseExtender(queue: queue, lease: lease) { [self] in heldLeases }
        let jobsDone = ShutdownSignal()
        await withDiscardingTaskGroup { group in
            group.addTask { try? await extender.run(shutdown: jobsDone) }
            await claimUntilShutdown(shutdown, into: &group)
            await finishOrHandBack(cancelling: &group)
            jobsDone.trigger()
            group.cancelAll()
        }
    }

    /// The wait after failed claims in a row: 100 ms, doubling up to 5 s.
    static let claimBackoff = Backoff(first: .milliseconds(100), limit: .seconds(5))

    private func claimUntilShutdown(_ shutdown: ShutdownSignal, into group: inout DiscardingTaskGroup) async {
        var failures = 0
        while !shutdown.isTriggered {
            let free = concurrency - busySlots
            if free <= 0 {
                await slotFreed.wait(timeout: .milliseconds(250))
                continue
            }
            do {
                let room = kindRoom()
                let batch = try await queue.claim(max: min(free, 256), lease: lease, limits: room)
                failures = 0
                var claimed: [ClaimedJob] = []
                for item in batch.items {
                    switch item {
                    case .job(let job): claimed.append(job)
                    case .corrupt(let id, let reason):
                        metrics.jobs.increment(labels: "unknown", "dead")
                        logger.error("dead-lettered an unreadable job", ["job": .string(id), "reason": .string(reason)])
                    }
                }
                for jobs in batching.group(claimed) { start(jobs, claimedAt: batch.claimedAt, in: &group) }
                if let token = claimed.compactMap({ Int($0.lease.token) }).max() {
                    startedThrough.withLock { $0 = max($0, token) }
                }
                if !claimed.isEmpty { await onClaimed() }
                if batch.items.isEmpty && room.values.contains(0) {
                    // Jobs of a kind at its limit may be due and left for others: wait for one of ours to finish
                    // (or briefly, for other work) rather than claim again at once.
                    await slotFreed.wait(timeout: .milliseconds(100))
                } else if batch.items.isEmpty {
                    try await queue.waitForWork(timeout: batch.idleWait(maxIdle: .milliseconds(500)))
                }
            } catch {
                failures += 1
                let wait = Self.claimBackoff.delay(afterFailure: failures)
                logger.warn("claim failed; backing off", ["error": .error(error), "retry_in_s": .seconds(wait)])
                await shutdown.sleep(for: wait)
            }
        }
    }

    /// Runs `jobs` as a child task of the dispatcher's group; each holds a slot (and has its lease extended) until
    /// settled.
    private func start(_ jobs: [ClaimedJob], claimedAt: Date, in group: inout DiscardingTaskGroup) {
        inFlight.withLock { inFlight in
            for job in jobs { inFlight[job.lease.id] = (job.lease, job.kind) }
        }
        metrics.slots.set(Double(busySlots), labels: "busy")
        for job in jobs { metrics.jobLateness.observe(max(0, claimedAt.timeIntervalSince(job.dueAt)), labels: job.kind) }
        group.addTask {
            await self.process(jobs)
            self.inFlight.withLock { inFlight in
                for job in jobs { inFlight.removeValue(forKey: job.lease.id) }
            }
            self.metrics.slots.set(Double(self.busySlots), labels: "busy")
            self.slotFreed.ring()
        }
    }

    /// Decodes, runs and settles one group of jobs.
    private func process(_ claimed: [ClaimedJob]) async {
        var decided: [(ClaimedJob, CountdownJob?, JobDisposition)] = []
        var runnable: [(ClaimedJob, CountdownJob)] = []
        for job in claimed {
            switch CountdownJob.decode(kind: job.kind, payload: job.payload) {
            case .success(let decoded): runnable.append((job, decoded))
            case .failure(let problem): decided.append((job, nil, .undecodable(problem.reason)))
            }
        }
        if !runnable.isEmpty {
            let started = ContinuousClock.now
            let results = await runner.run(runnable.map(\.1))
            let elapsed = ContinuousClock.now - started
            let cancelled = Task.isCancelled
            for ((job, decoded), result) in zip(runnable, results) {
                metrics.jobDuration.observe(elapsed, labels: job.kind)
                decided.append((job, decoded, JobDisposition.decide(result, attempt: job.attempt, cancelled: cancelled, transient: transient)))
            }
        }
        await settle(decided, batch: claimed.count)
    }

    /// Applies each decision: every `ack` of the group in one round trip (one by one if that fails), the others
    /// one by one.
    private func settle(_ decided: [(job: ClaimedJob, decoded: CountdownJob?, disposition: JobDisposition)], batch: Int) async {
        let acks = decided.filter { $0.disposition.action == .ack }.map(\.job.lease)
        var acknowledged = acks.isEmpty
        if acks.count > 1 {
            do {
                try await queue.ack(acks)
                acknowledged = true
            } catch {
                logger.warn("could not acknowledge a batch of jobs; acknowledging one by one", ["error": .error(error)])
            }
        }
        for (job, decoded, planned) in decided {
            let disposition: JobDisposition
            do {
                disposition = try await withholdingGroupsInFlight(planned)
            } catch {
                logger.warn("could not settle job; its lease will expire and it will run again",
                            ["job": .string(job.id), "kind": .string(job.kind), "settle_error": .error(error)])
                continue
            }
            var fields: [String: LogValue] = ["job": .string(job.id), "kind": .string(job.kind), "attempt": .int(job.attempt)]
            if batch > 1 { fields["batch"] = .int(batch) }
            if let stream = decoded?.streamID { fields["stream"] = .string(stream) }
            for (key, value) in disposition.fields { fields[key] = .string(value) }
            let log = logger.with(fields)
            var outcome = disposition.outcome
            do {
                switch disposition.action {
                case .ack:
                    // A withheld hand-on was not among the acknowledgements sent together.
                    if !acknowledged || planned.action != .ack { try await queue.ack(job.lease) }
                case .enqueueThenAck(let jobs):
                    try await queue.enqueue(jobs.map { NewJob(id: $0.id, kind: $0.kind.rawValue, payload: $0.payload, due: .now) })
                    try await queue.ack(job.lease)
                case .postpone(let after, let error):
                    try await queue.postpone(job.lease, after: after, error: error)
                case .retry(let after, let error):
                    try await queue.retry(job.lease, after: after, error: error)
                case .fail(let error):
                    switch try await queue.fail(job.lease, error: error) {
                    case .deadLettered:
                        outcome = "dead"
                        log.error("job dead-lettered after its last attempt")
                    case .retrying: outcome = "failed"
                    case .stale: outcome = nil
                    }
                }
            } catch {
                // Redis is away: the lease simply expires and the job comes back (at-least-once).
                log.warn("could not settle job; its lease will expire and it will run again", ["settle_error": .error(error)])
            }
            if let outcome { metrics.jobs.increment(labels: job.kind, outcome) }
            if disposition.outcome == "skipped", let reason = disposition.fields["reason"] {
                metrics.skip(kind: job.kind, reason: reason)
            }
            log.log(disposition.level, disposition.message)
        }
    }

    /// `planned`, unless it hands on jobs of a group that still has live jobs (a run repeated after its
    /// acknowledgement was lost): then nothing is queued and the job is acknowledged as skipped.
    private func withholdingGroupsInFlight(_ planned: JobDisposition) async throws -> JobDisposition {
        guard case .enqueueThenAck(let jobs) = planned.action else { return planned }
        for group in CountdownJob.exclusiveGroups(of: jobs) where try await queue.hasLiveJobs(prefix: group) {
            return .groupInFlight(group, withheld: jobs.count)
        }
        return planned
    }

    /// How many more jobs of each limited kind this worker may take now.
    private func kindRoom() -> [String: Int] {
        let withheld = Dictionary(uniqueKeysWithValues: withheldKinds().map { ($0, 0) })
        guard !kindLimits.isEmpty else { return withheld }
        let running = inFlight.withLock { inFlight in
            inFlight.values.reduce(into: [String: Int]()) { counts, held in counts[held.kind, default: 0] += 1 }
        }
        return kindLimits.reduce(into: withheld) { room, limit in room[limit.key] = room[limit.key] ?? max(0, limit.value - (running[limit.key] ?? 0)) }
    }

    /// Waits up to the drain time for running jobs; then cancels them (they stop sending and hand themselves back)
    /// and waits up to `cancelGrace` more. A job still running after that keeps its lease, which expires or is
    /// taken over once this process is gone: it is never handed back while it might still send.
    private func finishOrHandBack(cancelling group: inout DiscardingTaskGroup) async {
        await withTimeout(drain) { await self.untilIdle() }
        let running = busySlots
        guard running > 0 else { return }
        logger.warn("cancelling unfinished jobs at the drain deadline; they are handed back once stopped", ["jobs": .int(running)])
        group.cancelAll()
        await withTimeout(cancelGrace) { await self.untilIdle() }
        let stuck = busySlots
        if stuck > 0 {
            logger.error("jobs did not stop after cancellation; their leases are left to expire", ["jobs": .int(stuck)])
        }
    }

    /// Returns once no job runs (or the task is cancelled).
    private func untilIdle() async {
        while busySlots > 0 && !Task.isCancelled { await slotFreed.wait() }
    }
}
