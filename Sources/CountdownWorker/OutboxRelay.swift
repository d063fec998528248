import BlockingIO
import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import Lifecycle
import Postgres
import Telemetry

/// Turns outbox rows into queue operations. Wakes on `NOTIFY countdown_outbox` (polling as a fallback), takes a
/// batch with `FOR UPDATE SKIP LOCKED` (so relays in every worker share the work), locks the streams involved,
/// plans from their current state, hands the operations to Redis and only then deletes the rows and commits.
/// Redis down means the transaction rolls back and the rows wait; a crash after Redis accepted them means the
/// rows come again and the (idempotent) operations repeat.
public final class OutboxRelay: PeriodicService {
    public let name = "outbox-relay"
    private let session: PostgresSession
    private let listener: PostgresListener
    private let state = Locked<(listening: Bool, failures: Int)>((false, 0))
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
        listener = PostgresListener(configuration: configuration)
        self.queue = queue
        self.planner = planner
        self.metrics = metrics
        self.logger = logger.with(["component": "relay"])
        self.batchSize = batchSize
        self.pollInterval = pollInterval
    }

    /// Relays a batch; a full batch goes on at once, otherwise it waits for a NOTIFY (or the poll interval) and
    /// drains whatever else arrived. Failures back off exponentially up to 5 s and listen again.
    public func runOnce() async -> Duration? {
        do {
            if !state.withLock({ $0.listening }) {
                try await listener.listen("countdown_outbox")
                state.withLock { $0.listening = true }
            }
            let handled = try await relayOnce()
            state.withLock { $0.failures = 0 }
            if handled >= batchSize { return .zero }
            if try await listener.nextEvent(timeout: pollInterval) != nil {
                while try await listener.nextEvent(timeout: .zero) != nil {}
            }
            return .zero
        } catch {
            let failures = state.withLock { state -> Int in
                state.failures += 1
                state.listening = false
                return state.failures
            }
            let wait = Self.backoff.delay(afterFailure: failures)
            logger.warn("relay failed; backing off", ["error": .error(error), "retry_in_s": .seconds(wait)])
            return wait
        }
    }

    /// The wait after failed rounds in a row: 200 ms, doubling up to 5 s.
    static let backoff = Backoff(first: .milliseconds(200), limit: .seconds(5))

    public func finish() async {
        await listener.close()
        session.close()
    }

    /// Relays one batch; returns how many rows it handled. When a row of the batch cannot be read or planned, or
    /// a stream's lock cannot be had within `lock_timeout`, the batch is relayed row by row instead (see
    /// `relayRowByRow`).
    @discardableResult
    public func relayOnce() async throws -> Int {
        let limit = batchSize
        let relayed: Int
        do {
            relayed = try await relay { try OutboxQueries.take(limit: limit, on: $0) }
        } catch where [.rowData, .lockTimeLimit].contains(StoreError(classifying: error)?.code) {
            logger.warn("relay batch failed on a row; relaying row by row", ["error": .error(error)])
            return try await relayRowByRow()
        }
        if relayed > 0 { logger.debug("relayed outbox rows", ["rows": .int(relayed)]) }
        return relayed
    }

    /// Plans and queues the rows `take` locks, in one transaction across the Redis call: it never commits on a
    /// connection that replaced the one that locked the rows (their lock is gone; they come again). With
    /// `waitingForStreams` false, a stream another planner holds throws `StreamsHeld` at once.
    private func relay(waitingForStreams: Bool = true,
                       _ take: @escaping @Sendable (PostgresConnection) throws -> [OutboxRow]) async throws -> Int {
        let planner = self.planner
        let queue = self.queue
        return try await session.transaction { transaction -> Int in
            let claimed = try await transaction.run { connection in
                let rows = try take(connection)
                let streamIDs = Array(Set(rows.compactMap(\.streamID)))
                if waitingForStreams {
                    try StreamStateQueries.lockStreams(streamIDs, on: connection)
                } else if try !StreamStateQueries.tryLockStreams(streamIDs, on: connection) {
                    throw StreamsHeld()
                }
                let states = try StreamStateQueries.load(streamIDs, remindersWhenDone: false, on: connection)
                return (rows: rows, states: states, now: try StreamStateQueries.now(on: connection))
            }
            guard !claimed.rows.isEmpty else { return 0 }
            let operations = claimed.rows.flatMap { $0.plan(with: planner, states: claimed.states, now: claimed.now) }
            try await QueueOperation.apply(operations, to: queue, now: claimed.now)
            let ids = claimed.rows.map(\.id)
            let planned = Array(claimed.states.keys)
            try await transaction.run { connection in
                try OutboxQueries.delete(ids, on: connection)
                // A stream fixed by its writer plans again: it leaves the quarantine.
                try QuarantineQueries.remove(.stream, keys: planned, on: connection)
            }
            return claimed.rows.count
        }
    }

    /// Relays the oldest rows one at a time, each in its own transaction, so one bad row never blocks the rest:
    /// a row that cannot be read or planned is quarantined (and leaves the outbox); a row whose stream another
    /// planner holds stays for the next pass (without waiting for it), and so do the later rows of that stream.
    private func relayRowByRow() async throws -> Int {
        let limit = batchSize
        let rows = try await session.run { try OutboxQueries.peek(limit: limit, on: $0) }
        var handled = 0
        var heldStreams: Set<String> = []
        for row in rows {
            if let stream = row.streamID, heldStreams.contains(stream) { continue }
            do {
                let id = row.id
                handled += try await relay(waitingForStreams: false) { try OutboxQueries.take(id: id, on: $0) }
            } catch is StreamsHeld {
                if let stream = row.streamID { heldStreams.insert(stream) }
                logger.info("stream held by another writer; its rows wait", ["stream_id": .string(row.streamID ?? ""), "outbox_id": "\(row.id)"])
            } catch {
                guard let reason = StoreError.rowDataReason(of: error) else { throw error }
                try await quarantine(id: row.id, streamID: row.streamID, reason: reason)
                handled += 1
            }
        }
        return handled
    }

    /// Records the row (by its stream when it has one) in the quarantine and removes it from the outbox.
    private func quarantine(id: Int64, streamID: String?, reason: String) async throws {
        let kind: QuarantineQueries.Kind = streamID == nil ? .outbox : .stream
        let key = streamID ?? String(id)
        try await session.transaction { transaction in
            try await transaction.run { connection in
                try QuarantineQueries.record(kind, key: key, foundBy: "relay", reason: reason, on: connection)
                try OutboxQueries.delete([id], on: connection)
            }
        }
        metrics.quarantined.increment(labels: "relay")
        logger.warn("row quarantined", ["kind": .string(kind.rawValue), "key": .string(key), "outbox_id": "\(id)", "reason": .string(reason)])
    }

    /// Another planner holds a stream of the row (row by row, streams are not waited for).
    struct StreamsHeld: Error {}
}
