import BlockingIO
import CountdownDomain
import CountdownStore
import DelayQueue
import Lifecycle
import Telemetry

/// Samples queue depth, lateness, the outbox backlog and the quarantine into gauges every few seconds (scrapes stay cheap and
/// never wait on Redis or PostgreSQL).
public final class QueueStatsPoller: PeriodicService {
    public let name = "stats-poller"
    private let queue: any DelayQueue
    private let database: StoreClient
    private let metrics: WorkerMetrics
    private let interval: Duration
    private let readiness: @Sendable () async -> [String: String]

    /// - Parameter readiness: the same check `/readyz` runs; sampled so `countdown_worker_ready` stays current.
    public init(queue: any DelayQueue, database: StoreClient, metrics: WorkerMetrics, interval: Duration = .seconds(5),
                readiness: @escaping @Sendable () async -> [String: String]) {
        self.readiness = readiness
        self.queue = queue
        self.database = database
        self.metrics = metrics
        self.interval = interval
    }

    public func runOnce() async -> Duration? {
        if let stats = try? await queue.stats() {
            metrics.queueJobs.set(Double(stats.delayed), labels: "delayed")
            metrics.queueJobs.set(Double(stats.dueNow), labels: "due")
            metrics.queueJobs.set(Double(stats.leased), labels: "leased")
            metrics.queueJobs.set(Double(stats.dead), labels: "dead")
            metrics.queueOldestLateness.set(stats.oldestDueLateness.timeInterval)
        }
        if let outbox = try? await database.withConnection({ try OutboxQueries.backlog(on: $0) }) {
            metrics.outboxBacklog.set(Double(outbox.rows))
            metrics.outboxLag.set(outbox.oldestSeconds)
        }
        if let quarantined = try? await database.quarantined() {
            metrics.quarantineRows.set(Double(quarantined))
        }
        _ = await readiness()
        return interval
    }
}
