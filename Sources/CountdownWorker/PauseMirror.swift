import BlockingIO
import CountdownDomain
import CountdownMaintenance
import CountdownStore
import DelayQueue
import Lifecycle
import Telemetry

/// Keeps the queue's Redis pause keys (the claim-time check) equal to the pause state in PostgreSQL (SPEC 10.3),
/// every half second: a kind paused there is paused in Redis again after Redis lost its data or failed over, a kind
/// resumed there (by `countdown-admin resume` or the operator console) is resumed in Redis. A kind PostgreSQL has
/// no row for is left as Redis has it. Also sets `countdown_queue_paused{kind}` from PostgreSQL.
public final class PauseMirror: PeriodicService {
    public let name = "pause-mirror"
    let database: StoreClient
    let queue: any DelayQueue
    let metrics: WorkerMetrics
    let logger: Logger
    let interval: Duration
    private let failing = Locked(false)

    public init(database: StoreClient, queue: any DelayQueue, metrics: WorkerMetrics, logger: Logger, interval: Duration = .milliseconds(500)) {
        self.interval = interval
        self.database = database
        self.queue = queue
        self.metrics = metrics
        self.logger = logger.with(["component": "pause-mirror"])
    }

    /// Reads PostgreSQL's state, mirrors it into Redis and the gauge.
    func syncOnce() async throws {
        let truth = try await database.withConnection { try PauseQueries.all(on: $0) }
        let paused = Set(truth.filter(\.paused).map(\.kind))
        for kind in CountdownJob.Kind.allCases { metrics.queuePaused.set(paused.contains(kind.rawValue) ? 1 : 0, labels: kind.rawValue) }
        let plan = try await PauseSync.apply(truth, to: queue)
        if !plan.isEmpty {
            logger.warn("pause state mirrored from PostgreSQL to Redis", [
                "paused": .string(plan.pause.values.flatMap { $0 }.sorted().joined(separator: ",")),
                "resumed": .string(plan.resume.joined(separator: ",")),
            ])
        }
    }

    public func runOnce() async -> Duration? {
        do {
            try await syncOnce()
            failing.withLock { $0 = false }
        } catch {
            // Redis keeps its last pause keys meanwhile; one line per streak of failures.
            if !failing.value { logger.warn("pause state could not be mirrored; retrying", ["error": .error(error)]) }
            failing.withLock { $0 = true }
        }
        return interval
    }
}
