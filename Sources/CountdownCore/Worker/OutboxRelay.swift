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
    private let session: PostgresClient
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
        session = PostgresClient(configuration: configuration, maxConnections: 1)
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
        let claimed: (rows: [OutboxRow], states: [String: StreamState], now: Date, backend: Int32) = try await session.withConnection { connection in
            try connection.execute("BEGIN")
            do {
                let rows = try connection.query("""
                    SELECT id, topic, stream_id, user_id, device_id, rescheduled, created_at FROM countdown_outbox
                    ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
                    """, [limit]).map { row in
                    OutboxRow(id: try row.decode("id"), topic: OutboxRow.Topic(rawValue: try row.decode("topic")) ?? .stream,
                              streamID: try row.decode("stream_id"), userID: try row.decode("user_id"), deviceID: try row.decode("device_id"),
                              rescheduled: try row.decode("rescheduled"), createdAt: try row.decode("created_at"))
                }
                let streamIDs = Array(Set(rows.compactMap(\.streamID)))
                try StreamStateQuery.lockStreams(streamIDs, on: connection)
                let states = try StreamStateQuery.load(streamIDs, on: connection)
                return (rows, states, try StreamStateQuery.now(on: connection), connection.backendProcessID)
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        guard !claimed.rows.isEmpty else {
            try await session.withConnection { try $0.execute("COMMIT") }
            metrics.outboxLag.set(0)
            return 0
        }
        do {
            let operations = claimed.rows.flatMap { $0.plan(with: planner, states: claimed.states, now: claimed.now) }
            try await QueueOperation.apply(operations, to: queue, now: claimed.now)
        } catch {
            try? await session.withConnection { try $0.execute("ROLLBACK") }
            throw error
        }
        let ids = claimed.rows.map { String($0.id) }
        try await session.withConnection { connection in
            guard connection.backendProcessID == claimed.backend else {
                // The connection was replaced mid-batch: the lock is gone; the rows are still there and come again.
                throw RelayInterrupted()
            }
            try connection.execute("DELETE FROM countdown_outbox WHERE id = ANY($1::bigint[])", [PostgresTextArray(ids)])
            try connection.execute("COMMIT")
        }
        if let oldest = claimed.rows.map(\.createdAt).min() {
            metrics.outboxLag.set(max(0, claimed.now.timeIntervalSince(oldest)))
        }
        logger.debug("relayed outbox rows", ["rows": .int(claimed.rows.count)])
        return claimed.rows.count
    }
}

/// The relay's connection was lost between its two halves; nothing was deleted.
struct RelayInterrupted: Error, CustomStringConvertible {
    var description: String { "database connection changed during an outbox batch; it will be retried" }
}
