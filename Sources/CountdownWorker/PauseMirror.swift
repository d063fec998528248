import CountdownDomain
import CountdownStore
import DelayQueue
import Postgres
import Telemetry

/// Keeps the queue's Redis pause keys (the claim-time check) equal to the pause state in PostgreSQL (SPEC 10.3),
/// every half second: a kind paused there is paused in Redis again after Redis lost its data or failed over, a kind
/// resumed there (by `countdown-admin resume` or the operator console) is resumed in Redis. A kind PostgreSQL has
/// no row for is left as Redis has it. Also sets `countdown_queue_paused{kind}` from PostgreSQL.
public struct PauseMirror: Service {
    public let name = "pause-mirror"
    let database: PostgresClient
    let queue: any DelayQueue
    let metrics: WorkerMetrics
    let logger: Logger
    var interval: Duration = .milliseconds(500)

    public init(database: PostgresClient, queue: any DelayQueue, metrics: WorkerMetrics, logger: Logger) {
        self.database = database
        self.queue = queue
        self.metrics = metrics
        self.logger = logger.with(["component": "pause-mirror"])
    }

    /// What to change in Redis: kinds to pause (grouped by reason) and kinds to resume.
    struct Plan: Equatable {
        var pause: [String: [String]] = [:]
        var resume: [String] = []
        var isEmpty: Bool { pause.isEmpty && resume.isEmpty }
    }

    /// The changes that make Redis (`mirrored`: the kinds paused there) match PostgreSQL's `truth`.
    static func plan(truth: [PauseStore.Entry], mirrored: Set<String>) -> Plan {
        var plan = Plan()
        for entry in truth.sorted(by: { $0.kind < $1.kind }) {
            if entry.paused && !mirrored.contains(entry.kind) {
                plan.pause[entry.reason, default: []].append(entry.kind)
            } else if !entry.paused && mirrored.contains(entry.kind) {
                plan.resume.append(entry.kind)
            }
        }
        return plan
    }

    /// Applies PostgreSQL's `truth` to the queue; returns what it changed.
    @discardableResult
    static func apply(_ truth: [PauseStore.Entry], to queue: any DelayQueue) async throws -> Plan {
        let plan = plan(truth: truth, mirrored: Set(try await queue.pausedKinds().map(\.kind)))
        for (reason, kinds) in plan.pause.sorted(by: { $0.key < $1.key }) { try await queue.pause(kinds: kinds, reason: reason) }
        // An empty list would resume every kind.
        if !plan.resume.isEmpty { try await queue.resume(kinds: plan.resume) }
        return plan
    }

    /// Reads PostgreSQL's state, mirrors it into Redis and the gauge.
    func syncOnce() async throws {
        let truth = try await database.withConnection { try PauseStore.all(on: $0) }
        let paused = Set(truth.filter(\.paused).map(\.kind))
        for kind in CountdownJob.Kind.allCases { metrics.queuePaused.set(paused.contains(kind.rawValue) ? 1 : 0, labels: kind.rawValue) }
        let plan = try await Self.apply(truth, to: queue)
        if !plan.isEmpty {
            logger.warn("pause state mirrored from PostgreSQL to Redis", [
                "paused": .string(plan.pause.values.flatMap { $0 }.sorted().joined(separator: ",")),
                "resumed": .string(plan.resume.joined(separator: ",")),
            ])
        }
    }

    public func run(shutdown: ShutdownSignal) async throws {
        var failing = false
        while !shutdown.isTriggered {
            do {
                try await syncOnce()
                failing = false
            } catch {
                // Redis keeps its last pause keys meanwhile; one line per streak of failures.
                if !failing { logger.warn("pause state could not be mirrored; retrying", ["error": .error(error)]) }
                failing = true
            }
            await shutdown.sleep(for: interval)
        }
    }
}
