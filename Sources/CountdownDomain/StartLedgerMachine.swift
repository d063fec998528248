/// The start ledger's transitions for one row (one stream, user and device), as a pure value: an event in, the
/// row's next state and what the caller does out. `StartLedgerStore`, `ClaimStore` and `ActivityLifetimeStore` write
/// the same rules as batched SQL; `LedgerMachineConformanceTests` replays event sequences on both and compares every state.
///
/// The invariant it keeps: a start is pushed only by the sender that moved the row to `sending`, and a row leaves
/// `sending` only through its outcome, its own sender giving it back after its claim expired, or another sender
/// taking it over from a dead or silent owner (docs/design.md, "One start per device and stream").
public enum StartLedgerMachine {
    /// A row's status, as stored.
    public enum Status: String, Sendable, CaseIterable {
        case pending, sending, sent, failed, skipped
    }

    /// A row as far as its transitions are concerned.
    public struct Row: Sendable, Equatable {
        public var status: Status
        public var reason: String?
        public var tokenHash: String?
        public var claimedBy: String?
        /// Seconds on the database's clock (the machine never reads a clock of its own).
        public var claimedUntil: Double?
        public var attempts: Int
        /// Which activity lifetime of the device the row is for, from 1 (a long reschedule opens the next one).
        public var generation: Int

        public init(status: Status, reason: String? = nil, tokenHash: String? = nil, claimedBy: String? = nil,
                    claimedUntil: Double? = nil, attempts: Int = 0, generation: Int = 1) {
            self.status = status
            self.reason = reason
            self.tokenHash = tokenHash
            self.claimedBy = claimedBy
            self.claimedUntil = claimedUntil
            self.attempts = attempts
            self.generation = generation
        }
    }

    /// The other senders holding claims, sorted by the fleet's heartbeat.
    public struct Owners: Sendable, Equatable {
        public var dead: Set<String>
        public var alive: Set<String>

        public init(dead: Set<String> = [], alive: Set<String> = []) {
            self.dead = dead
            self.alive = alive
        }
    }

    /// What happens to a row.
    public enum Event: Sendable {
        /// A fan-out found the device: eligible (`skip` nil) or not, with its tokens' hash; `claimFor` the sender
        /// that claims it on the spot (owner, claim end), when the fan-out has room for it.
        case recorded(skip: StartSkipReason?, tokenHash: String, claimFor: (owner: String?, until: Double)?, now: Double)
        /// A sender asks for the row (`StartLedgerStore.claim`).
        case claimRequested(owner: String?, until: Double, owners: Owners, now: Double)
        /// The sender holding it extends its claim (`ClaimKeeper`).
        case extended(owner: String, until: Double)
        /// Its sender gives back a claim it will not push (`ClaimStore.keepAlive`'s release).
        case released(owner: String, now: Double)
        /// The push's outcome (`LedgerSettlement`): status, reason and the tokens it went to.
        case settled(status: Status, reason: String?, tokenHash: String?)
        /// The activity the row's start began will have ended (iOS's 8 hours) before the stream starts: its push
        /// went out longer than an activity's lifetime before the planned start (`ActivityLifetimeStore`). An
        /// Android countdown has no such life.
        case outlived(android: Bool)
    }

    /// What the caller does after a transition.
    public enum Action: Sendable, Equatable {
        /// Nothing changes.
        case none
        /// The row changes; nobody pushes because of it.
        case write
        /// The row changes and the sender named in the event now holds it: it pushes the start.
        case push
    }

    /// The row after `event` (`row` nil: not in the ledger yet) and the caller's action.
    public static func apply(_ event: Event, to row: Row?) -> (row: Row?, action: Action) {
        let (next, action) = transition(event, row)
        return (next, action == .write && next == row ? .none : action)
    }

    private static func transition(_ event: Event, _ row: Row?) -> (row: Row?, action: Action) {
        switch event {
        case .recorded(let skip, let tokenHash, let claim, _):
            if let row, !reopens(row, skip: skip, tokenHash: tokenHash) { return (row, .none) }
            let (attempts, generation) = (row?.attempts ?? 0, row?.generation ?? 1)
            if let skip {
                return (Row(status: .skipped, reason: skip.rawValue, tokenHash: tokenHash, attempts: attempts, generation: generation), .write)
            }
            guard let claim else { return (Row(status: .pending, tokenHash: tokenHash, attempts: attempts, generation: generation), .write) }
            return (Row(status: .sending, tokenHash: tokenHash, claimedBy: claim.owner, claimedUntil: claim.until, attempts: attempts + 1,
                        generation: generation), .push)

        case .claimRequested(let owner, let until, let owners, let now):
            guard var row, claimable(row, owners: owners, now: now) else { return (row, .none) }
            row.status = .sending
            row.claimedBy = owner
            row.claimedUntil = until
            row.attempts += 1
            return (row, .push)

        case .extended(let owner, let until):
            guard var row, row.status == .sending, row.claimedBy == owner else { return (row, .none) }
            row.claimedUntil = until
            return (row, .write)

        case .released(let owner, let now):
            guard var row, row.status == .sending, row.claimedBy == owner, let until = row.claimedUntil, until < now else { return (row, .none) }
            row.status = .pending
            row.claimedBy = nil
            row.claimedUntil = nil
            return (row, .write)

        case .settled(let status, let reason, let tokenHash):
            guard var row else { return (nil, .none) }
            row.status = status
            row.reason = reason
            row.claimedUntil = nil
            row.tokenHash = tokenHash ?? row.tokenHash
            return (row, .write)

        case .outlived(let android):
            // The next lifetime: pending again, for a new push-to-start (SPEC 10.1, long reschedules).
            guard var row, row.status == .sent, !android else { return (row, .none) }
            row.status = .pending
            row.reason = nil
            row.claimedBy = nil
            row.claimedUntil = nil
            row.generation += 1
            return (row, .write)
        }
    }

    /// Whether a fan-out's finding changes a row already in the ledger: a skipped row whose reason or tokens
    /// differ, and a row failed on a dead token that the device has since replaced, now eligible. Rows sent,
    /// being sent, pending or failed otherwise stay: one start per device and stream.
    public static func reopens(_ row: Row, skip: StartSkipReason?, tokenHash: String) -> Bool {
        switch row.status {
        case .skipped:
            return !(skip != nil && row.reason == skip?.rawValue && row.tokenHash == tokenHash)
        case .failed:
            return (row.reason ?? "").hasPrefix("dead_token:") && skip == nil && row.tokenHash != tokenHash
        case .pending, .sending, .sent:
            return false
        }
    }

    /// Whether a sender may take the row: pending, or being sent by a dead owner, or by one whose claim ran out and
    /// who is not known to be alive (a living worker keeps its claims even while it cannot extend them).
    public static func claimable(_ row: Row, owners: Owners, now: Double) -> Bool {
        switch row.status {
        case .pending:
            return true
        case .sending:
            if let owner = row.claimedBy, owners.dead.contains(owner) { return true }
            guard let until = row.claimedUntil, until < now else { return false }
            return !(row.claimedBy.map(owners.alive.contains) ?? false)
        case .sent, .failed, .skipped:
            return false
        }
    }
}
