/// Outcomes of pushes that already went out, waiting to be written to PostgreSQL: a pure value.
///
/// A submitter opens a ticket, adds items to it as its pushes answer and closes it; the ticket is complete once it
/// is closed and all its items are committed. Batches are taken one at a time (at most `maxBatch` items, oldest
/// first). A committed batch completes the tickets with nothing left open; a failed batch goes back to the front
/// unchanged and doubles the backoff, so nothing is dropped however long the database stays away.
public struct PendingSettlements<Item: Sendable>: Sendable {
    public typealias Ticket = Int

    private var waiting: [(ticket: Ticket, item: Item)] = []
    private var inFlight: [(ticket: Ticket, item: Item)]?
    private var open: [Ticket: (items: Int, closed: Bool)] = [:]
    private var nextTicket: Ticket = 0
    /// Consecutive failed batches (0 after a commit).
    public private(set) var failures = 0
    public let maxBatch: Int

    public init(maxBatch: Int) {
        precondition(maxBatch > 0, "a batch holds at least one item")
        self.maxBatch = maxBatch
    }

    /// Items not yet committed (waiting or in the batch being written).
    public var count: Int { waiting.count + (inFlight?.count ?? 0) }

    /// Opens a ticket to add items to.
    public mutating func openTicket() -> Ticket {
        let ticket = nextTicket
        nextTicket += 1
        open[ticket] = (0, false)
        return ticket
    }

    /// Queues `items` under `ticket` (an unknown or closed ticket gets them anyway; they are never dropped).
    public mutating func add(_ items: [Item], to ticket: Ticket) {
        guard !items.isEmpty else { return }
        if let state = open[ticket] { open[ticket] = (state.items + items.count, state.closed) }
        waiting.append(contentsOf: items.map { (ticket, $0) })
    }

    /// No more items for `ticket`: returns whether it is complete already (nothing of it left to commit).
    public mutating func close(_ ticket: Ticket) -> Bool {
        guard let state = open[ticket] else { return true }
        if state.items == 0 {
            open.removeValue(forKey: ticket)
            return true
        }
        open[ticket] = (state.items, true)
        return false
    }

    /// Queues `items` under a new, closed ticket (a ticket without items is complete at once).
    public mutating func submit(_ items: [Item]) -> Ticket {
        let ticket = openTicket()
        add(items, to: ticket)
        _ = close(ticket)
        return ticket
    }

    /// The next batch to write, or nil while one is being written or nothing waits.
    public mutating func takeBatch() -> [Item]? {
        guard inFlight == nil, !waiting.isEmpty else { return nil }
        let batch = Array(waiting.prefix(maxBatch))
        waiting.removeFirst(batch.count)
        inFlight = batch
        return batch.map(\.item)
    }

    /// The batch was committed: returns the tickets it completed.
    public mutating func committed() -> [Ticket] {
        guard let batch = inFlight else { return [] }
        inFlight = nil
        failures = 0
        var completed: [Ticket] = []
        for (ticket, _) in batch {
            guard let state = open[ticket] else { continue }
            if state.items <= 1 && state.closed {
                open.removeValue(forKey: ticket)
                completed.append(ticket)
            } else {
                open[ticket] = (state.items - 1, state.closed)
            }
        }
        return completed
    }

    /// The batch could not be written: it goes back to the front, to be written again after `backoff`.
    public mutating func failed() {
        guard let batch = inFlight else { return }
        inFlight = nil
        failures += 1
        waiting.insert(contentsOf: batch, at: 0)
    }

    /// How long to wait before the next attempt: 0 after a success, then 50 ms doubling up to 5 s.
    public var backoff: Duration {
        failures == 0 ? .zero : .milliseconds(min(5000, 50 << min(failures - 1, 7)))
    }
}
