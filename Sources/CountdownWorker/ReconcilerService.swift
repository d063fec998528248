import BlockingIO
import CountdownMaintenance
import DelayQueue
import Foundation
import Lifecycle
import Redis
import Telemetry

/// Runs the reconciler at start and every interval, in one worker at a time: a Redis lock with expiry decides
/// who (no leader election; a crashed holder's lock simply expires).
///
/// After a Redis failover (`failovers` moved: the Sentinels announced a new primary, or `RedisServerWatch` saw
/// another server or a restarted one) it runs at once, not at the
/// end of the interval: writes the old primary had not replicated (jobs queued just before, acknowledgements) are
/// gone, and a start job among them would otherwise wait up to `RECONCILE_INTERVAL_SECONDS`. That run takes a lock
/// of its own (the interval's lock, replicated to the new primary, may still be held), and is tried again every
/// second until it has run here or elsewhere.
public final class ReconcilerService: PeriodicService {
    public let name = "reconciler"
    private let reconciler: Reconciler
    private let redis: RedisClient
    private let lockKey: String
    private let failoverLockKey: String
    private let interval: Duration
    private let failovers: @Sendable () -> Int
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let token = UUID().uuidString
    private let schedule: Locked<Schedule>

    /// - Parameter failovers: how many Redis failovers or restarts this process has heard of
    ///   (`RedisClient.failoversSeen` plus `RedisServerWatch.changes`).
    public init(reconciler: Reconciler, redis: RedisClient, namespace: String, interval: Duration, metrics: WorkerMetrics, logger: Logger,
                failovers: @escaping @Sendable () -> Int = { 0 }) {
        self.reconciler = reconciler
        self.redis = redis
        lockKey = RedisKeys(namespace: namespace).reconcileLock
        failoverLockKey = RedisKeys(namespace: namespace).reconcileFailoverLock
        self.interval = interval
        self.failovers = failovers
        schedule = Locked(Schedule(failoversSeen: failovers()))
        self.metrics = metrics
        self.logger = logger.with(["component": "reconciler"])
    }

    /// What the rounds remember: the failovers heard of, whether a run after one is still owed, when the next
    /// interval's run is due (nil: at once).
    private struct Schedule {
        var failoversSeen: Int
        var afterFailover = false
        var nextRun: ContinuousClock.Instant?
    }

    /// Checks for a failover every second; runs when the interval is up, at once after a failover (then again every
    /// second until that run has happened here or elsewhere).
    public func runOnce() async -> Duration? {
        let heard = failovers()
        let (due, afterFailover, heardNew) = schedule.withLock { schedule -> (Bool, Bool, Bool) in
            let heardNew = heard != schedule.failoversSeen
            if heardNew {
                schedule.failoversSeen = heard
                schedule.afterFailover = true
            }
            let due = schedule.afterFailover || schedule.nextRun.map { ContinuousClock.now >= $0 } ?? true
            return (due, schedule.afterFailover, heardNew)
        }
        if heardNew { logger.warn("Redis failed over or restarted; reconciling now to rebuild what the old server had not kept") }
        guard due else { return waitForNextRound() }
        let ran = await runOnce(token: token, afterFailover: afterFailover)
        schedule.withLock { schedule in
            if ran && afterFailover { schedule.afterFailover = false }
            if ran || !afterFailover { schedule.nextRun = ContinuousClock.now.advanced(by: interval) }
        }
        return waitForNextRound()
    }

    /// A second at most, less when the interval ends sooner: failovers are looked for every second.
    private func waitForNextRound() -> Duration {
        let next = schedule.withLock { $0.afterFailover ? nil : $0.nextRun }
        guard let next else { return .seconds(1) }
        return max(.zero, min(.seconds(1), next - ContinuousClock.now))
    }

    /// One run if this worker gets the lock; true when it ran or another worker holds the lock.
    private func runOnce(token: String, afterFailover: Bool) async -> Bool {
        do {
            if try await acquire(token, afterFailover: afterFailover) {
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
                if !report.remindersLeftToPages.isEmpty {
                    logger.info("reconciler left active reminders to the reminder pages still queued or running",
                                ["count": .int(report.remindersLeftToPages.count),
                                 "streams": .string(report.remindersLeftToPages.prefix(20).joined(separator: ","))])
                }
                if report.totalChanges > 0 {
                    logger.warn("reconciler repaired the queue", fields.merging(["added": "\(report.added)", "removed": "\(report.removed)"]) { $1 })
                } else {
                    logger.info("reconciler found the queue consistent", fields)
                }
            } else {
                metrics.reconcileRuns.increment(labels: "skipped")
            }
            return true
        } catch {
            metrics.reconcileRuns.increment(labels: "error")
            logger.warn("reconciler failed", ["error": .error(error)])
            return false
        }
    }

    /// Takes the lock for a little less than one interval, so the next run anywhere can take it again; after a
    /// failover, the failover lock for 10 s (one run for the fleet).
    private func acquire(_ token: String, afterFailover: Bool) async throws -> Bool {
        let lock = FleetRunLock(redis: redis, key: afterFailover ? failoverLockKey : lockKey, token: token)
        return try await lock.acquire(forMilliseconds: afterFailover ? 10_000 : FleetRunLock.milliseconds(forInterval: interval))
    }
}
