import DelayQueue
import Foundation
import Redis
import Telemetry

/// Runs the reconciler at start and every interval, in one worker at a time: a Redis lock with expiry decides
/// who (no leader election; a crashed holder's lock simply expires).
public final class ReconcilerService: Service {
    public let name = "reconciler"
    private let reconciler: Reconciler
    private let redis: RedisClient
    private let lockKey: String
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let logger: Logger

    public init(reconciler: Reconciler, redis: RedisClient, namespace: String, interval: Duration, metrics: WorkerMetrics, logger: Logger) {
        self.reconciler = reconciler
        self.redis = redis
        lockKey = "{\(namespace)}:reconcile:lock"
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "reconciler"])
    }

    public func run(shutdown: ShutdownSignal) async throws {
        let token = UUID().uuidString
        while !shutdown.isTriggered {
            do {
                if try await acquire(token) {
                    let report = try await reconciler.run()
                    metrics.reconcileRuns.increment(labels: "ok")
                    for (kind, count) in report.added.merging(report.corrected, uniquingKeysWith: +).merging(report.removed, uniquingKeysWith: +) {
                        metrics.reconcileRepaired.increment(by: UInt64(count), labels: kind)
                    }
                    let fields: [String: LogValue] = ["streams": .int(report.streamsChecked), "changes": .int(report.totalChanges)]
                    if !report.quarantined.isEmpty {
                        metrics.quarantined.increment(by: UInt64(report.quarantined.count), labels: "reconciler")
                        logger.warn("reconciler quarantined streams it cannot read or plan",
                                    ["count": .int(report.quarantined.count), "streams": .string(report.quarantined.prefix(20).joined(separator: ","))])
                    }
                    if report.totalChanges > 0 {
                        logger.warn("reconciler repaired the queue", fields.merging(["added": "\(report.added)", "removed": "\(report.removed)"]) { $1 })
                    } else {
                        logger.info("reconciler found the queue consistent", fields)
                    }
                } else {
                    metrics.reconcileRuns.increment(labels: "skipped")
                }
            } catch {
                metrics.reconcileRuns.increment(labels: "error")
                logger.warn("reconciler failed", ["error": .error(error)])
            }
            await shutdown.sleep(for: interval)
        }
    }

    /// Takes the lock for a little less than one interval, so the next run anywhere can take it again.
    private func acquire(_ token: String) async throws -> Bool {
        let milliseconds = max(1000, Int(interval.components.seconds) * 1000 - 1000)
        let reply = try await redis.command(["SET", RedisArgument(lockKey), RedisArgument(token), "NX", "PX", RedisArgument(milliseconds)])
        return reply.string == "OK"
    }
}
