import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import Postgres
import Telemetry

/// Turns outbox rows into queue operations. Wakes on `NOTIFY countdown_outbox` (polling as a fallback), takes a
/// batch with `FOR UPDATE SKIP LOCKED` (so relays in every worker share the work), locks the streams involved,
/// plans from their current state, hands the operations to Redis and only then deletes the rows and commits.
/// Redis down means the transaction rolls back and the rows wait; a crash after Redis accepted them means the
/// rows come again and the (idempotent) operations repeat.
public final class OutboxRelay: Service {
    public let name = "outbox-relay"
    private let session: PostgresSession
    private let listenerConfiguration: PostgresConfiguration
    private let queue: any DelayQueue
    private let planner: JobPlanner
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let batchSize: Int
    private let pollInterval: Duration

    /// - Parameter configuration: the relay opens its own connection (a transaction spans the Redis call) and its
    ///   own listener.
    public init(configuration: PostgresConfiguration, queue: any DelayQueue, planner: JobPlanner, metrics: WorkerMetrics, logger: Logger,
                batchSize: Int = 500, pollInterval: Duration = .seconds(1)) {
        session = PostgresSession(configuration: configuration, name: "outbox-relay")
        listenerConfiguration = configuration
        self.queue = queue
        self.planner = planner
        self.metrics = metrics
        self.logger = logger.with(["component": "relay"])
        self.batchSize = batchSize
        self.pollInterval = pollInterval
    }

    public func run(shutdown: ShutdownSignal) async throws {
        let listener = PostgresListener(configuration: listenerConfiguration)
        var failures = 0
        var listening = false
        while !shutdown.isTriggered {
            do {
                if !listening {
                    try await listener.listen("countdown_outbox")
                    listening = true
                }
                let handled = try await relayOnce()
                failures = 0
                if handled >= batchSize { continue }
                // Idle: wait for a NOTIFY (or the poll interval), then drain whatever else arrived.
                if try await listener.nextEvent(timeout: pollInterval) != nil {
                    while try await listener.nextEvent(timeout: .zero) != nil {}
                }
            } catch {
                failures += 1
                listening = false
                let wait = Duration.milliseconds(min(5000, 100 * (1 << min(failures, 6))))
                logger.warn("relay failed; backing off", ["error": .error(error), "retry_in_s": .seconds(wait)])
                await shutdown.sleep(for: wait)
            }
        }
        await listener.close()
        session.close()
    }

    /// Relays one batch; returns how many rows it handled.
    @discardableResult
    public func relayOnce() async throws -> Int {
        let limit = batchSize
        let planner = self.planner
        let queue = self.queue
        // One transaction across the Redis call: it never commits on a connection that replaced the one that
        // locked the rows (their lock is gone; they come again).
        let relayed = try await session.transaction { transaction -> Int in
            let claimed = try await transaction.run { connection in
                let rows = try OutboxStore.take(limit: limit, on: connection)
                let streamIDs = Array(Set(rows.compactMap(\.streamID)))
                try StreamStateStore.lockStreams(streamIDs, on: connection)
                let states = try StreamStateStore.load(streamIDs, on: connection)
                return (rows: rows, states: states, now: try StreamStateStore.now(on: connection))
            }
            guard !claimed.rows.isEmpty else { return 0 }
            let operations = claimed.rows.flatMap { $0.plan(with: planner, states: claimed.states, now: claimed.now) }
            try await QueueOperation.apply(operations, to: queue, now: claimed.now)
            let ids = claimed.rows.map(\.id)
            try await transaction.run { try OutboxStore.delete(ids, on: $0) }
            return claimed.rows.count
        }
        if relayed > 0 { logger.debug("relayed outbox rows", ["rows": .int(relayed)]) }
        return relayed
    }
}
