/// The start ledger's transitions for one row (one stream, user and device), as a pure value: an event in, the
/// row's next state and what the caller does out. `StartLedger` (CountdownStore) writes the same rules as batched
/// SQL: each of its statements changes only rows in the statuses `rule(for:)` lets that change start from, and
/// writes only statuses the rule lets it end in (checked before the statement runs); the finer conditions (owner,
/// claim expiry, generation) are SQL that `LedgerMachineConformanceTests` holds to `apply` over random histories.
///
/// The invariant it keeps: a start is pushed only by the sender that moved the row to `sending`, and a row leaves
/// `sending` only through its outcome, its own sender giving it back after its claim expired, or another sender
/// taking it over from a dead or silent owner (docs/design.md, "One start per device and stream").
public enum StartLedgerMachine {
    /// A row's status, as stored.
    public enum Status: String, Sendable, CaseIterable {
        case pending, sending, sent, failed, skipped
        /// Recorded as sent without a push: a database restored from a backup does not know the starts sent since,
        /// and the restore guard records them so (reason `restored`, SPEC 12.4). Never pushed, never reopened.
        case assumedSent = "assumed_sent"
    }

    /// The kinds of change the ledger's statements make.
    public enum Change: String, Sendable, CaseIterable {
        /// A fan-out writes a row it found no row for.
        case record
        /// A fan-out writes over a row it found (`reopens`).
        case reopen
        case claim
        case extend
        case release
        case settle
        case outlive
        case restore
    }

    /// The statuses a change starts from (`from`; `creates`: also where there is no row yet) and ends in (`to`).
    public struct Rule: Sendable, Equatable {
        public var from: Set<Status>
        public var creates: Bool
        public var to: Set<Status>

        /// Whether the rule lets a row go from `from` (nil: no row) to `to`.
        public func allows(from: Status?, to: Status) -> Bool {
            (from.map(self.from.contains) ?? creates) && self.to.contains(to)
        }
    }

    /// The one table of the ledger's transitions: `apply` keeps to it, and every statement of `StartLedger` reads
    /// its status guard and checks what it writes against it.
    public static func rule(for change: Change) -> Rule {
        switch change {
        case .record: Rule(from: [], creates: true, to: [.pending, .sending, .skipped])
        case .reopen: Rule(from: [.skipped, .failed], creates: false, to: [.pending, .sending, .skipped])
        case .claim: Rule(from: [.pending, .sending], creates: false, to: [.sending])
        case .extend: Rule(from: [.sending], creates: false, to: [.sending])
        case .release: Rule(from: [.sending], creates: false, to: [.pending])
        case .settle: Rule(from: [.sending], creates: false, to: [.sent, .failed, .pending, .skipped])
        case .outlive: Rule(from: [.sent], creates: false, to: [.pending])
        case .restore: Rule(from: [.pending, .sending, .failed, .skipped], creates: true, to: [.assumedSent])
        }
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
        /// A sender asks for the row (`StartLedger.claim`).
        case claimRequested(owner: String?, until: Double, owners: Owners, now: Double)
        /// The sender holding it extends its claim (`ClaimKeeper`).
        case extended(owner: String, until: Double)
        /// Its sender gives back a claim it will not push (`StartLedger.keepClaims`'s release).
        case released(owner: String, now: Double)
        /// The push's outcome (`StartLedger.Settlement`): status, reason and the tokens it went to, from the sender
        /// `owner` that claimed the row's `generation`. It lands only on that claim: a late outcome of a sender
        /// declared dead, or of an earlier generation, changes nothing.
        case settled(status: Status, reason: String?, tokenHash: String?, owner: String?, generation: Int)
        /// The activity the row's start began will have ended (iOS's 8 hours) before the stream starts: its push
        /// went out longer than an activity's lifetime before the planned start (`StartLedger.reopenOutlived`). An
        /// Android countdown has no such life.
        case outlived(android: Bool)
        /// The restore guard records the row as sent before the backup's database knew it (reason `restored`).
        case restored
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

    /// The row after `event` (`row` nil: not in the ledger yet) and the caller's action. A transition the table
    /// (`rule(for:)`) does not allow changes nothing.
    public static func apply(_ event: Event, to row: Row?) -> (row: Row?, action: Action) {
        let (next, action) = transition(event, row)
        guard action != .none, let next, next != row else { return (row, .none) }
        guard rule(for: change(of: event, to: row)).allows(from: row?.status, to: next.status) else { return (row, .none) }
        return (next, action)
    }

    /// The kind of change `event` makes to `row`.
    public static func change(of event: Event, to row: Row?) -> Change {
        switch event {
        case .recorded: row == nil ? .record : .reopen
        case .claimRequested: .claim
        case .extended: .extend
        case .released: .release
        case .settled: .settle
        case .outlived: .outlive
        case .restored: .restore
        }
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

        case .settled(let status, let reason, let tokenHash, let owner, let generation):
            guard var row, row.status == .sending, row.claimedBy == owner, row.generation == generation else { return (row, .none) }
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

        case .restored:
            var next = row ?? Row(status: .assumedSent)
            guard next.status != .sent else { return (row, .none) }
            next.status = .assumedSent
            next.reason = "restored"
            next.claimedBy = nil
            next.claimedUntil = nil
            return (next, .write)
        }
    }

    /// Whether a fan-out's finding changes a row already in the ledger: a skipped row whose reason or tokens
    /// differ, and a row failed on a dead token that the device has since replaced, now eligible. Rows sent,
    /// being sent, pending or failed otherwise stay: one start per device and stream.
    public static func reopens(_ row: Row, skip: StartSkipReason?, tokenHash: String) -> Bool {
        guard rule(for: .reopen).from.contains(row.status) else { return false }
        if row.status == .skipped { return !(skip != nil && row.reason == skip?.rawValue && row.tokenHash == tokenHash) }
        return (row.reason ?? "").hasPrefix("dead_token:") && skip == nil && row.tokenHash != tokenHash
    }

    /// Whether a sender may take the row: pending, or being sent by a dead owner, or by one whose claim ran out and
    /// who is not known to be alive (a living worker keeps its claims even while it cannot extend them).
    public static func claimable(_ row: Row, owners: Owners, now: Double) -> Bool {
        guard rule(for: .claim).from.contains(row.status) else { return false }
        guard row.status == .sending else { return true }
        if let owner = row.claimedBy, owners.dead.contains(owner) { return true }
        guard let until = row.claimedUntil, until < now else { return false }
        return !(row.claimedBy.map(owners.alive.contains) ?? false)
    }
}
