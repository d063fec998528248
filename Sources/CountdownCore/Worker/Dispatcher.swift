import BlockingIO
import DelayQueue
import Foundation
import Postgres
import Redis
import Telemetry

/// Claims due jobs, never more than its free slots, runs each on its own task, and settles it on the queue
/// (ack, retry after, backoff, dead letter). Leases of running jobs are extended; on shutdown it stops claiming,
/// lets running jobs finish within the drain time and hands back the rest for another worker.
public final class Dispatcher: Service {
    public let name = "dispatcher"
    private let queue: any DelayQueue
    private let handler: JobHandler
    private let concurrency: Int
    private let lease: Duration
    private let drain: Duration
    private let startBatchSize: Int
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let inFlight = Locked([String: JobLease]())
    private let slotFreed = WakeSignal()

    /// - Parameter startBatchSize: start jobs claimed together are fanned out together, this many per batch (each
    ///   still takes a slot and is settled on its own).
    public init(queue: any DelayQueue, handler: JobHandler, concurrency: Int, lease: Duration = .seconds(60), drain: Duration,
                startBatchSize: Int = 32, metrics: WorkerMetrics, logger: Logger) {
        self.queue = queue
        self.startBatchSize = max(1, startBatchSize)
        self.handler = handler
        self.concurrency = concurrency
        self.lease = lease
        self.drain = drain
        self.metrics = metrics
        self.logger = logger.with(["component": "dispatcher"])
        metrics.slots.set(Double(concurrency), labels: "total")
    }

    public var busySlots: Int { inFlight.withLock { $0.count } }

    public func run(shutdown: ShutdownSignal) async throws {
        let extender = Task { await extendLeases(until: shutdown) }
        var failures = 0
        while !shutdown.isTriggered {
            let free = concurrency - busySlots
            if free <= 0 {
                await slotFreed.wait(timeout: .milliseconds(250))
                continue
            }
            do {
                let batch = try await queue.claim(max: min(free, 256), lease: lease)
                failures = 0
                var starts: [(ClaimedJob, String)] = []
                for item in batch.items {
                    switch item {
                    case .job(let job):
                        if job.kind == CountdownJob.Kind.start.rawValue,
                           case .success(.start(let stream)) = CountdownJob.decode(kind: job.kind, payload: job.payload) {
                            starts.append((job, stream))
                        } else {
                            start([job], claimedAt: batch.claimedAt) { await self.process(job) }
                        }
                    case .corrupt(let id, let reason):
                        metrics.jobs.increment(labels: "unknown", "dead")
                        logger.error("dead-lettered an unreadable job", ["job": .string(id), "reason": .string(reason)])
                    }
                }
                for offset in stride(from: 0, to: starts.count, by: startBatchSize) {
                    let group = Array(starts[offset..<min(offset + startBatchSize, starts.count)])
                    start(group.map(\.0), claimedAt: batch.claimedAt) { await self.processStarts(group) }
                }
                if batch.items.isEmpty {
                    try await queue.waitForWork(timeout: batch.idleWait(maxIdle: .milliseconds(500)))
                }
            } catch {
                failures += 1
                let wait = Duration.milliseconds(min(5000, 50 * (1 << min(failures, 7))))
                logger.warn("claim failed; backing off", ["error": .error(error), "retry_in_s": .seconds(wait)])
                await shutdown.sleep(for: wait)
            }
        }
        await finishOrHandBack()
        extender.cancel()
    }

    /// Runs `work` for `jobs` on a task of its own; each job holds a slot (and has its lease extended) until it ends.
    private func start(_ jobs: [ClaimedJob], claimedAt: Date, _ work: @escaping @Sendable () async -> Void) {
        inFlight.withLock { inFlight in
            for job in jobs { inFlight[job.lease.id] = job.lease }
        }
        metrics.slots.set(Double(busySlots), labels: "busy")
        for job in jobs { metrics.jobLateness.observe(max(0, claimedAt.timeIntervalSince(job.dueAt)), labels: job.kind) }
        Task {
            await work()
            self.inFlight.withLock { inFlight in
                for job in jobs { inFlight.removeValue(forKey: job.lease.id) }
            }
            self.metrics.slots.set(Double(self.busySlots), labels: "busy")
            self.slotFreed.notify()
        }
    }

    private func process(_ claimed: ClaimedJob) async {
        let log = logger.with(["job": .string(claimed.id), "kind": .string(claimed.kind), "attempt": .int(claimed.attempt)])
        let job: CountdownJob
        switch CountdownJob.decode(kind: claimed.kind, payload: claimed.payload) {
        case .success(let decoded): job = decoded
        case .failure(let problem):
            // Backoff, then the dead letters with the reason: a kind only a newer worker knows survives a rolling deploy.
            log.error("job cannot be decoded", ["reason": .string(problem.reason)])
            await fail(claimed, error: "undecodable: \(problem.reason)", log: log)
            return
        }
        let started = ContinuousClock.now
        let outcome: Result<HandlerOutcome, any Error>
        do { outcome = .success(try await handler.handle(job)) } catch { outcome = .failure(error) }
        metrics.jobDuration.observe(ContinuousClock.now - started, labels: claimed.kind)
        await conclude(claimed, job: job, outcome: outcome, log: log)
    }

    /// Start jobs claimed together: one fan-out over their streams, then each job settled with its own outcome
    /// (a failure of the whole fan-out, such as a lost database, is every job's failure).
    private func processStarts(_ group: [(job: ClaimedJob, stream: String)]) async {
        let started = ContinuousClock.now
        var decided: [(job: ClaimedJob, stream: String, outcome: Result<HandlerOutcome, any Error>)]
        do {
            let outcomes = try await handler.handleStarts(group.map(\.stream))
            decided = group.map { ($0.job, $0.stream, .success(outcomes[$0.stream] ?? .skipped(reason: "stream_missing"))) }
        } catch where group.count > 1 && !Self.isTransient(error) {
            // One bad stream must not cost the others an attempt: run each on its own.
            logger.warn("a start batch failed; running its streams one by one", ["jobs": .int(group.count), "error": .error(error)])
            decided = []
            for (job, stream) in group {
                do { decided.append((job, stream, .success(try await handler.handle(.start(stream: stream))))) } catch {
                    decided.append((job, stream, .failure(error)))
                }
            }
        } catch {
            decided = group.map { ($0.job, $0.stream, .failure(error)) }
        }
        let elapsed = ContinuousClock.now - started
        // Finished jobs are acknowledged in one round trip; the others are settled one by one.
        let finished = decided.filter { Self.isFinished($0.outcome) }.map(\.job.lease)
        var acknowledged = false
        if !finished.isEmpty {
            do {
                try await queue.ack(finished)
                acknowledged = true
            } catch {
                logger.warn("could not acknowledge a batch of start jobs; acknowledging one by one", ["error": .error(error)])
            }
        }
        let batchAcknowledged = acknowledged
        await withTaskGroup(of: Void.self) { tasks in
            for (claimed, stream, outcome) in decided {
                metrics.jobDuration.observe(elapsed, labels: claimed.kind)
                let log = logger.with(["job": .string(claimed.id), "kind": .string(claimed.kind), "attempt": .int(claimed.attempt),
                                       "batch": .int(group.count)])
                tasks.addTask { await self.conclude(claimed, job: .start(stream: stream), outcome: outcome, log: log, acknowledged: batchAcknowledged) }
            }
        }
    }

    /// Done or skipped: the job is acknowledged and gone.
    static func isFinished(_ outcome: Result<HandlerOutcome, any Error>) -> Bool {
        switch outcome {
        case .success(.done), .success(.skipped): true
        default: false
        }
    }

    /// Turns a handler's outcome into the queue action for the job, and counts and logs it.
    /// - Parameter acknowledged: a finished job was already acknowledged with its batch.
    private func conclude(_ claimed: ClaimedJob, job: CountdownJob, outcome: Result<HandlerOutcome, any Error>, log: Logger,
                          acknowledged: Bool = false) async {
        let streamField: [String: LogValue] = job.streamID.map { ["stream": .string($0)] } ?? [:]
        switch outcome {
        case .success(.done(let detail)):
            if !acknowledged { await settle(claimed, log: log) { try await self.queue.ack(claimed.lease) } }
            metrics.jobs.increment(labels: claimed.kind, "done")
            log.info("job done", streamField.merging(["outcome": "done", "detail": .string(detail)]) { $1 })
        case .success(.skipped(let reason)):
            if !acknowledged { await settle(claimed, log: log) { try await self.queue.ack(claimed.lease) } }
            metrics.jobs.increment(labels: claimed.kind, "skipped")
            metrics.skip(kind: claimed.kind, reason: reason)
            log.info("job skipped", streamField.merging(["outcome": "skipped", "reason": .string(reason)]) { $1 })
        case .success(.reschedule(let after, let reason)):
            // Only while our lease is current: a newer plan the relay wrote meanwhile wins.
            await settle(claimed, log: log) { try await self.queue.postpone(claimed.lease, after: after, error: nil) }
            metrics.jobs.increment(labels: claimed.kind, "rescheduled")
            log.info("job rescheduled", streamField.merging(["outcome": "rescheduled", "reason": .string(reason), "in_s": .seconds(after)]) { $1 })
        case .success(.retry(let after, let reason)):
            if let after {
                await settle(claimed, log: log) { try await self.queue.retry(claimed.lease, after: after, error: reason) }
                metrics.jobs.increment(labels: claimed.kind, "retried")
            } else {
                await fail(claimed, error: reason, log: log)
            }
            log.warn("job will be retried", streamField.merging(["outcome": "retry", "reason": .string(reason)]) { $1 })
        case .failure(let error):
            if Self.isTransient(error) {
                // The database or Redis is away: hand the job back without spending its attempts.
                let wait = Duration.seconds(min(30, 1 << min(claimed.attempt, 5)))
                await settle(claimed, log: log) { try await self.queue.postpone(claimed.lease, after: wait, error: "\(error)") }
                metrics.jobs.increment(labels: claimed.kind, "retried")
                log.warn("job hit a transient error", streamField.merging(["error": .error(error)]) { $1 })
            } else {
                await fail(claimed, error: "\(error)", log: log)
                log.error("job failed", streamField.merging(["error": .error(error)]) { $1 })
            }
        }
    }

    private func fail(_ claimed: ClaimedJob, error: String, log: Logger) async {
        await settle(claimed, log: log) {
            switch try await self.queue.fail(claimed.lease, error: error) {
            case .deadLettered:
                self.metrics.jobs.increment(labels: claimed.kind, "dead")
                log.error("job dead-lettered after its last attempt", ["error": .string(error)])
            case .retrying:
                self.metrics.jobs.increment(labels: claimed.kind, "failed")
            case .stale:
                break
            }
        }
    }

    /// Runs a queue call; if Redis is away the lease simply expires and the job comes back (at-least-once).
    private func settle(_ claimed: ClaimedJob, log: Logger, _ body: @escaping @Sendable () async throws -> Void) async {
        do { try await body() } catch { log.warn("could not settle job; its lease will expire and it will run again", ["error": .error(error)]) }
    }

    private func extendLeases(until shutdown: ShutdownSignal) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: lease / 3)
            let leases = inFlight.withLock { Array($0.values) }
            for held in leases { _ = try? await queue.extend(held, by: lease) }
        }
    }

    private func finishOrHandBack() async {
        let deadline = ContinuousClock.now.advanced(by: drain)
        while busySlots > 0 && ContinuousClock.now < deadline {
            await slotFreed.wait(timeout: .milliseconds(100))
        }
        let leftovers = inFlight.withLock { Array($0.values) }
        for held in leftovers {
            _ = try? await queue.postpone(held, after: .zero, error: "worker shut down before the job finished")
        }
        if !leftovers.isEmpty { logger.warn("handed back unfinished jobs", ["jobs": .int(leftovers.count)]) }
    }

    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? PostgresError {
            // A deadlock or serialization race aborted the transaction before anything was decided: run it again.
            return error.isConnectionLoss || error.code == .connectionFailed || error.isSerializationFailure
        }
        if let error = error as? RedisError { return error.breaksConnection }
        return false
    }
}
