import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import Telemetry

/// Writes start-push outcomes to the ledger as they arrive, in batches of about `fill` outcomes or `gather` apart,
/// whichever comes first, for every fan-out of the process. A push that went out is never forgotten: when
/// PostgreSQL is away its outcome stays in memory and is written again with backoff for as long as the process
/// lives, while the worker keeps its claims alive, so no other sender takes the row and pushes it again.
///
/// It also knows which ledger rows this process holds: a fan-out hands it the rows it claimed (`hold`), and a row
/// is let go once its outcome is written. `ClaimKeeper` extends exactly those claims.
public actor StartSettler {
    /// One push's outcome, and the token to clear when the push service refused it.
    public struct Result: Sendable {
        public var settlement: LedgerSettlement
        public var refused: DeviceTokenStore.Invalidation?

        public init(_ settlement: LedgerSettlement, refused: DeviceTokenStore.Invalidation? = nil) {
            self.settlement = settlement
            self.refused = refused
        }
    }

    public typealias Ticket = PendingSettlements<Result>.Ticket

    private let database: PostgresClient
    private let logger: Logger
    private let gather: Duration
    private let fill: Int
    /// The writer waiting for a batch to fill, and which wait it is (a timer of an earlier wait must not end it).
    private var gathering: (wait: Int, continuation: CheckedContinuation<Void, Never>)?
    private var waits = 0
    private var pending: PendingSettlements<Result>
    private var waiters: [Ticket: CheckedContinuation<Void, any Error>] = [:]
    private var writing = false
    private var held = Set<ClaimStore.Row>()
    private var releasing = Set<ClaimStore.Row>()

    /// Under a burst, pushes are answered a few thousand a second: a batch every few milliseconds cost PostgreSQL
    /// a transaction per few dozen outcomes, while a fan-out waits for its last outcomes only once.
    ///
    /// - Parameters:
    ///   - batch: most outcomes written in one transaction (a backlog after an outage is written this many at a time).
    ///   - fill: a batch is written as soon as this many outcomes wait...
    ///   - gather: ...or this long after the writer started waiting for them, whichever comes first.
    public init(database: PostgresClient, logger: Logger, batch: Int = 500, fill: Int = 200, gather: Duration = .milliseconds(20)) {
        self.database = database
        self.logger = logger.with(["component": "start_settler"])
        self.gather = gather
        self.pending = PendingSettlements(maxBatch: batch)
        self.fill = max(1, min(fill, batch))
    }

    /// Outcomes not yet written.
    public var unsettled: Int { pending.count }

    /// The ledger rows this process claimed and whose outcome is not yet written.
    public var heldRows: [ClaimStore.Row] { Array(held) }

    /// Records rows a fan-out just claimed: they are held until their outcome is written.
    public func hold(_ rows: [ClaimStore.Row]) {
        held.formUnion(rows)
    }

    /// Records rows a fan-out may have claimed but will not push (the transaction that claimed them failed, and
    /// may have committed first): `ClaimKeeper` gives them back to `pending` once their claim expires. Held rows
    /// are never given back (a later fan-out claimed them anew).
    public func release(_ rows: [ClaimStore.Row]) {
        releasing.formUnion(rows)
    }

    /// The rows to give back, except any held again since (claimed anew by a later fan-out); they are handed
    /// over, so what the keeper could not give back yet must come back through `release`.
    public func takeReleasing() -> [ClaimStore.Row] {
        defer { releasing = [] }
        return Array(releasing.subtracting(held))
    }

    public func openTicket() -> Ticket { pending.openTicket() }

    /// Queues outcomes under `ticket`; they are written within milliseconds.
    public func add(_ results: [Result], to ticket: Ticket) {
        pending.add(results, to: ticket)
        if pending.count >= fill { endGathering(nil) }
        startWriting()
    }

    /// Closes `ticket` and waits until all its outcomes are written. Throws the database's error when a write
    /// fails meanwhile: the outcomes stay queued and are written once PostgreSQL is back, the caller just stops
    /// waiting (its job is postponed, and finds the rows settled or still claimed by this worker when it runs again).
    public func settle(_ ticket: Ticket) async throws {
        guard !pending.close(ticket) else { return }
        try await withCheckedThrowingContinuation { waiters[ticket] = $0 }
    }

    /// Waits until every outcome is written, or `limit` passed (a process about to exit).
    public func drain(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        while pending.count > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Closes `ticket` without waiting (its fan-out failed; its outcomes are still written).
    public func abandon(_ ticket: Ticket) {
        _ = pending.close(ticket)
    }

    private func startWriting() {
        guard !writing, pending.count > 0 else { return }
        writing = true
        Task { await self.writeAll() }
    }

    private func writeAll() async {
        while pending.count > 0 {
            if pending.count < fill && pending.failures == 0 { await gatherMore() }
            guard let batch = pending.takeBatch() else { break }
            do {
                try await write(batch)
                for result in batch {
                    let settlement = result.settlement
                    held.remove(ClaimStore.Row(stream: settlement.stream, user: settlement.user, device: settlement.device))
                }
                for ticket in pending.committed() { waiters.removeValue(forKey: ticket)?.resume() }
            } catch {
                pending.failed()
                let waiting = waiters
                waiters = [:]
                for waiter in waiting.values { waiter.resume(throwing: error) }
                logger.warn("could not record start outcomes; keeping them to write again", [
                    "outcomes": .int(pending.count), "retry_in_s": .seconds(pending.backoff), "error": .error(error),
                ])
                try? await Task.sleep(for: pending.backoff)
            }
        }
        writing = false
    }

    /// Waits until `fill` outcomes wait or `gather` passed.
    private func gatherMore() async {
        waits += 1
        let wait = waits
        let gather = self.gather
        let timer = Task { [weak self] in
            try? await Task.sleep(for: gather)
            await self?.endGathering(wait)
        }
        await withCheckedContinuation { continuation in
            gathering = (wait, continuation)
        }
        timer.cancel()
    }

    /// Ends the current wait for outcomes (`wait`: only that one; nil: whichever is current).
    private func endGathering(_ wait: Int?) {
        guard let current = gathering, wait == nil || wait == current.wait else { return }
        gathering = nil
        current.continuation.resume()
    }

    private func write(_ batch: [Result]) async throws {
        // Deadlocks are retried at once; anything else comes back here and is retried with backoff.
        try await database.transaction(serializationRetries: 2) { connection in
            try StartLedgerStore.settle(batch.map(\.settlement), on: connection)
            try DeviceTokenStore.clear(batch.compactMap(\.refused), on: connection)
        }
    }
}
