import CountdownMaintenance
import DelayQueue
import Foundation
import Lifecycle
import Redis
import Telemetry

/// Runs the pruner (SPEC 12.3) once per `RETENTION_INTERVAL_SECONDS` fleet-wide, as the reconciler runs: every worker
/// tries each interval and the one that takes the Redis lock (`{ns}:retention:lock`, held a little less than an
/// interval, and extended while its run lasts, so runs never overlap) runs it. Each round also publishes each table's
/// oldest row age, and counts what was deleted.
///
/// It gives way to bursts: after each statement it rests as long as the statement took (at most half of one
/// connection's time), and while the queue holds due jobs no worker has claimed yet (the fleet is behind: a burst),
/// it waits, checking every quarter second.
public final class PrunerService: PeriodicService {
    public let name = "pruner"
    private let pruner: Pruner
    private let queue: any DelayQueue
    private let lock: FleetRunLock
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(pruner: Pruner, queue: any DelayQueue, redis: RedisClient, namespace: String, interval: Duration, metrics: WorkerMetrics,
                logger: Logger) {
        self.pruner = pruner
        self.queue = queue
        lock = FleetRunLock(redis: redis, key: RedisKeys(namespace: namespace).retentionLock, token: UUID().uuidString)
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "pruner"])
    }

    /// One interval: the run if this worker took the lock, then the ages; waits the interval.
    public func runOnce() async -> Duration? {
        do {
            let held = FleetRunLock.milliseconds(forInterval: interval)
            guard try await lock.acquire(forMilliseconds: held) else {
                metrics.retentionRuns.increment(labels: "skipped")
                return interval
            }
            let started = ContinuousClock.now
            let report = try await pruner.run(deleted: { [metrics] table, rows in metrics.retentionDeleted.increment(by: UInt64(rows), labels: table) },
                                              between: { [self] took in await giveWay(after: took) })
            let elapsed = Int((ContinuousClock.now - started).components.seconds * 1000)
            try await lock.extend(forMilliseconds: max(1, held - elapsed))
            metrics.retentionRuns.increment(labels: "ok")
            for (table, age) in try await pruner.oldestAges() { metrics.retentionOldestAge.set(age, labels: table) }
            if report.total > 0 {
                logger.info("pruner deleted aged-out rows", [
                    "rows": .int(report.total), "streams": .int(report.streams), "duration_s": .seconds(ContinuousClock.now - started),
                    "tables": .string(report.deleted.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")),
                ])
            }
        } catch {
            metrics.retentionRuns.increment(labels: "error")
            logger.warn("pruner failed; the next interval tries again", ["error": .error(error)])
        }
        return interval
    }

    /// Between two statements: keeps the lock, rests as long as the statement took, and waits while the queue has
    /// due jobs nobody claimed yet (at most `longestWait`).
    private func giveWay(after took: Duration) async {
        _ = try? await lock.extend(forMilliseconds: Self.runLockMilliseconds)
        try? await Task.sleep(for: took)
        let giveUpAt = ContinuousClock.now + Self.longestWait
        while let stats = try? await queue.stats(), stats.dueNow - stats.paused > 0, ContinuousClock.now < giveUpAt, !Task.isCancelled {
            _ = try? await lock.extend(forMilliseconds: Self.runLockMilliseconds)
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The longest it waits for the queue between two statements (jobs held back stay due: the pruner must still end).
    static let longestWait = Duration.seconds(60)

    /// How long the lock lasts past the last statement of a run: a worker that died mid-run frees it this soon.
    static let runLockMilliseconds = 10_000
}
