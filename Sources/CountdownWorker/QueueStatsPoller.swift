import CountdownDomain
import CountdownStore
import DelayQueue
import Lifecycle
import Postgres
import Telemetry

/// Samples queue depth, lateness, the outbox backlog and the quarantine into gauges every few seconds (scrapes stay cheap and
/// never wait on Redis or PostgreSQL).
public final class QueueStatsPoller: Service {
    public let name = "stats-poller"
    private let queue: any DelayQueue
    private let database: PostgresClient
    private let metrics: WorkerMetrics
    private let interval: Duration
    private let readiness: @Sendable () async -> [String: String]

    /// - Parameter readiness: the same check `/readyz` runs; sampled so `countdown_worker_ready` stays current.
    public init(queue: any DelayQueue, database: PostgresClient, metrics: WorkerMetrics, interval: Duration = .seconds(5),
                readiness: @escaping @Sendable () async -> [String: String]) {
        self.readiness = readiness
        self.queue = queue
        self.database = database
        self.metrics = metrics
        self.interval = interval
    }

    public func run(shutdown: ShutdownSignal) async throws {
        while !shutdown.isTriggered {
            if let stats = try? await queue.stats() {
                metrics.queueJobs.set(Double(stats.delayed), labels: "delayed")
                metrics.queueJobs.set(Double(stats.dueNow), labels: "due")
                metrics.queueJobs.set(Double(stats.leased), labels: "leased")
                metrics.queueJobs.set(Double(stats.dead), labels: "dead")
                let (seconds, attoseconds) = stats.oldestDueLateness.components
                metrics.queueOldestLateness.set(Double(seconds) + Double(attoseconds) / 1e18)
            }
            if let outbox = try? await database.withConnection({ connection -> (Int, Double) in
                let row = try connection.query("""
                    SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM countdown_outbox
                    """).first
                return (try row?.decode("n", as: Int.self) ?? 0, try row?.decode("age", as: Double.self) ?? 0)
            }) {
                metrics.outboxBacklog.set(Double(outbox.0))
                metrics.outboxLag.set(outbox.1)
            }
            if let quarantined = try? await database.withConnection({ try QuarantineStore.count(on: $0) }) {
                metrics.quarantineRows.set(Double(quarantined))
            }
            _ = await readiness()
            await shutdown.sleep(for: interval)
        }
    }
}
