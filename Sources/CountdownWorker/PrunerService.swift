import CountdownMaintenance
import Foundation
import Lifecycle
import Redis
import Telemetry

/// Runs the pruner (SPEC 12.3) once per `RETENTION_INTERVAL_SECONDS` fleet-wide, as the reconciler runs: every worker
/// tries each interval and the one that takes the Redis lock (`{ns}:retention:lock`, held a little less than an
/// interval) runs it. Each round also publishes each table's oldest row age, and counts what was deleted.
public final class PrunerService: PeriodicService {
    public let name = "pruner"
    private let pruner: Pruner
    private let lock: FleetRunLock
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(pruner: Pruner, redis: RedisClient, namespace: String, interval: Duration, metrics: WorkerMetrics, logger: Logger) {
        self.pruner = pruner
        lock = FleetRunLock(redis: redis, key: "{\(namespace)}:retention:lock", token: UUID().uuidString)
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "pruner"])
    }

    /// One interval: the run if this worker took the lock, then the ages; waits the interval.
    public func runOnce() async -> Duration? {
        do {
            guard try await lock.acquire(forMilliseconds: FleetRunLock.milliseconds(forInterval: interval)) else {
                metrics.retentionRuns.increment(labels: "skipped")
                return interval
            }
            let started = ContinuousClock.now
            let report = try await pruner.run { [metrics] table, rows in metrics.retentionDeleted.increment(by: UInt64(rows), labels: table) }
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
}
