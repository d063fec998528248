import CountdownDomain
import CountdownStore
import Foundation
import Lifecycle
import Telemetry

/// Writes start-push outcomes to the ledger as they arrive, in batches of about `fill` outcomes or `gather` apart,
/// whichever comes first, for every fan-out of the process. A push that went out is never forgotten: when
/// PostgreSQL is away its outcome stays in memory and is written again with backoff for as long as the settler
/// runs, while the worker keeps its claims alive, so no other sender takes the row and pushes it again.
///
/// A service of the worker's group: `run` is the writer. It starts before the dispatcher and stops after it, so
/// at shutdown every outcome of the drained jobs is queued before `run` is asked to stop; it then writes what is
/// queued (without waiting to gather more) and returns, before the pools close. Outcomes still unwritten when the
/// group's grace period runs out are logged as lost to this process (their rows stay claimed until the claims
/// expire, then another worker settles them).
///
/// An outcome may hold its push's slot (`PushSlots`, from `PushGateway.sendEach(keepingSlots:)`): the slot is given back
/// once the outcome is committed, so a slot takes its next push only after the previous one is recorded and a crash
/// repeats at most one push per slot (SPEC 12.1). While PostgreSQL is away the slots stay taken: this worker sends
/// no more recorded pushes until their outcomes are written.
///
/// It also knows which ledger rows this process holds: a fan-out hands it the rows it claimed (`hold`), and a row
/// is let go once its outcome is written. `ClaimKeeper` extends exactly those claims.
public actor StartSettler: Service {
    /// One push's outcome, and the token to clear when the push service refused it.
    public struct Result: Sendable {
        public var settlement: StartLedger.Settlement
        public var refused: DeviceTokenQueries.Invalidation?
        /// The slot of the push this outcome answers, given back once the outcome is committed.
        var slots: PushSlots?

        public init(_ settlement: StartLedger.Settlement, refused: DeviceTokenQueries.Invalidation? = nil) {
            self.settlement = settlement
            self.refused = refused
        }
    }

    public typealias Ticket = PendingSettlements<Result>.Ticket

    public nonisolated let name = "start_settler"
    private let store: any StartOutcomeSettling
    private let logger: Logger
    private let metrics: (any FlowMetrics)?
    private let gather: Duration
    private let fill: Int
    /// Rung when outcomes arrive and when shutdown trips: the writer waits on it.
    private let bell = Doorbell()
    private var pending: PendingSettlements<Result>
    private var waiters: [Ticket: CheckedContinuation<Void, any Error>] = [:]
    /// Set once `run` returned: nothing queued later would be written.
    private var stopped = false
    private var held = Set<StartLedger.Key>()
    private var releasing = Set<StartLedger.Key>()

    /// Under a burst, pushes are answered a few thousand a second: a batch every few milliseconds cost PostgreSQL
    /// a transaction per few dozen outcomes, while a fan-out waits for its last outcomes only once.
    ///
    /// - Parameters:
    ///   - batch: most outcomes written in one transaction (a backlog after an outage is written this many at a time).
    ///   - fill: a batch is written as soon as this many outcomes wait...
    ///   - gather: ...or this long after the writer started waiting for them, whichever comes first.
    ///   - metrics: counts the outcomes the ledger refused.
    public init(store: any StartOutcomeSettling, logger: Logger, metrics: (any FlowMetrics)? = nil, batch: Int = 500, fill: Int = 200,
                gather: Duration = .milliseconds(20)) {
        self.store = store
        self.logger = logger.with(["component": "start_settler"])
        self.metrics = metrics
        self.gather = gather
        self.pending = PendingSettlements(maxBatch: batch)
        self.fill = max(1, min(fill, batch))
    }

    /// Outcomes not yet written.
    public var unsettled: Int { pending.count }

    /// The ledger rows this process claimed and whose outcome is not yet written.
    public var heldRows: [StartLedger.Key] { Array(held) }

    /// Records rows a fan-out just claimed: they are held until their outcome is written.
    public func hold(_ rows: [StartLedger.Key]) {
        held.formUnion(rows)
    }

    /// Records rows a fan-out may have claimed but will not push (the transaction that claimed them failed, and
    /// may have committed first): `ClaimKeeper` gives them back to `pending` once their claim expires. Held rows
    /// are never given back (a later fan-out claimed them anew).
    public func release(_ rows: [StartLedger.Key]) {
        releasing.formUnion(rows)
    }

    /// The rows to give back, except any held again since (claimed anew by a later fan-out); they are handed
    /// over, so what the keeper could not give back yet must come back through `release`.
    public func takeReleasing() -> [StartLedger.Key] {
        defer { releasing = [] }
        return Array(releasing.subtracting(held))
    }

    public func openTicket() -> Ticket { pending.openTicket() }

    /// Queues outcomes under `ticket`; they are written within milliseconds while the settler runs. `slots`: the
    /// slots of the pushes they answer (one per outcome), given back as the outcomes are committed.
    public func add(_ results: [Result], to ticket: Ticket, slots: PushSlots? = nil) {
        if let slots {
            pending.add(results.map { var result = $0; result.slots = slots; return result }, to: ticket)
        } else {
            pending.add(results, to: ticket)
        }
        if stopped {
            logger.error("start outcomes arrived after the settler stopped; they are not written", ["outcomes": .int(results.count)])
        }
        bell.ring()
    }

    /// Closes `ticket` and waits until all its outcomes are written. Throws the database's error when a write
    /// fails meanwhile: the outcomes stay queued and are written once PostgreSQL is back, the caller just stops
    /// waiting (its job is postponed, and finds the rows settled or still claimed by this worker when it runs again).
    /// Throws `CancellationError` when the settler stopped before they were written.
    public func settle(_ ticket: Ticket) async throws {
        guard !pending.close(ticket) else { return }
        if stopped { throw CancellationError() }
        try await withCheckedThrowingContinuation { waiters[ticket] = $0 }
    }

    /// Closes `ticket` without waiting (its fan-out failed; its outcomes are still written).
    public func abandon(_ ticket: Ticket) {
        _ = pending.close(ticket)
    }

    /// Writes outcomes as they arrive until `shutdown` trips, then writes what is queued and returns. Cancelled (the
    /// group's grace period ran out), it stops at once and logs what it could not write.
    public func run(shutdown: ShutdownSignal) async throws {
        await withDiscardingTaskGroup { group in
            // Wakes the writer when shutdown trips, so an idle or gathering writer flushes at once.
            group.addTask { [bell] in
                await shutdown.wait()
                bell.ring()
            }
            await write(until: shutdown)
            group.cancelAll()
        }
        stop()
    }

    private func write(until shutdown: ShutdownSignal) async {
        while !Task.isCancelled {
            guard pending.count > 0 else {
                if shutdown.isTriggered { return }
                await bell.wait()
                continue
            }
            if pending.failures == 0 && !shutdown.isTriggered { await gatherMore(shutdown) }
            guard let batch = pending.takeBatch() else { continue }
            do {
                let refused = try await store.settle(batch.map(\.settlement), refused: batch.compactMap(\.refused))
                for result in batch { held.remove(result.settlement.key) }
                Self.giveBackSlots(of: batch)
                report(refused)
                for ticket in pending.committed() { waiters.removeValue(forKey: ticket)?.resume() }
            } catch {
                pending.failed()
                resumeWaiters(throwing: error)
                logger.warn("could not record start outcomes; keeping them to write again", [
                    "outcomes": .int(pending.count), "retry_in_s": .seconds(pending.backoff), "error": .error(error),
                ])
                try? await Task.sleep(for: pending.backoff)
            }
        }
    }

    /// The committed outcomes' slots go back to the gateway, one per outcome, in one call per batch of pushes.
    private static func giveBackSlots(of batch: [Result]) {
        var counts: [ObjectIdentifier: (slots: PushSlots, count: Int)] = [:]
        for result in batch {
            guard let slots = result.slots else { continue }
            counts[ObjectIdentifier(slots), default: (slots, 0)].count += 1
        }
        for (slots, count) in counts.values { slots.release(count) }
    }

    /// Outcomes the ledger refused are not written again: each is logged and counted (a late outcome of a sender
    /// declared dead, or of a row opened since for a new activity, must not overwrite its successor's).
    private func report(_ refused: [StartLedger.Refused]) {
        for refusal in refused {
            metrics?.countRefusedStartOutcome()
            logger.warn("start outcome refused by the ledger; not written", [
                "stream": .string(refusal.settlement.key.stream), "device": .string(refusal.settlement.key.device),
                "status": .string(refusal.settlement.status.rawValue), "error": .error(refusal.error),
            ])
        }
    }

    /// Waits until `fill` outcomes wait, `gather` passed or shutdown tripped.
    private func gatherMore(_ shutdown: ShutdownSignal) async {
        let deadline = ContinuousClock.now + gather
        while pending.count < fill && !shutdown.isTriggered && !Task.isCancelled {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return }
            await bell.wait(timeout: left)
        }
    }

    /// After the last write: fan-outs still waiting learn that their outcomes will not be written by this process.
    private func stop() {
        stopped = true
        if pending.count > 0 {
            logger.error("stopped with start outcomes unwritten; their rows stay claimed until the claims expire", ["outcomes": .int(pending.count)])
        }
        resumeWaiters(throwing: CancellationError())
    }

    private func resumeWaiters(throwing error: any Error) {
        let waiting = waiters
        waiters = [:]
        for waiter in waiting.values { waiter.resume(throwing: error) }
    }
}
