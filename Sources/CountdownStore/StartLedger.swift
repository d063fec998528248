import CountdownDomain
import Postgres

/// The start ledger (`countdown_start_ledger`): one row per (stream, user, device), the record that makes a start
/// happen once per activity lifetime. Every statement that changes a row's status is one of this type's: each
/// changes only rows in the statuses `StartLedgerMachine.rule(for:)` lets its change start from (a parameter of the
/// statement, read from the table) and writes only statuses the rule lets it end in (checked before it runs).
public enum StartLedger {
    public typealias Status = StartLedgerMachine.Status

    /// A row's key.
    public struct Key: Sendable, Hashable, Comparable, CustomStringConvertible {
        public var stream: String
        public var user: String
        public var device: String

        public init(stream: String, user: String, device: String) {
            self.stream = stream
            self.user = user
            self.device = device
        }

        /// Key order, in which every writer of ledger rows locks them, so two writers cannot deadlock.
        public static func < (a: Key, b: Key) -> Bool { (a.stream, a.user, a.device) < (b.stream, b.user, b.device) }

        public var description: String { "\(stream)/\(user)/\(device)" }
    }

    /// A row a sender holds: its key and the generation (activity lifetime) it was claimed for.
    public struct Claim: Sendable, Hashable {
        public var key: Key
        public var generation: Int

        public init(_ key: Key, generation: Int) {
            self.key = key
            self.generation = generation
        }
    }

    /// The outcome of one start push, written back to the row its sender claimed (`settle`).
    public struct Settlement: Sendable {
        public var claim: Claim
        /// The sender that claimed the row (`InsertClaim.owner`).
        public var owner: String?
        public var status: Status
        public var reason: String?
        public var name: String?
        /// `TokenHash.of` the (FCM, push-to-start) tokens the push went to, when one was sent.
        public var tokenHash: String?

        public init(_ claim: Claim, owner: String?, status: Status, reason: String?, name: String? = nil, tokenHash: String? = nil) {
            self.claim = claim
            self.owner = owner
            self.status = status
            self.reason = reason
            self.name = name
            self.tokenHash = tokenHash
        }

        public var key: Key { claim.key }
    }

    /// A settlement the ledger did not write, and why (`StoreError` with code `refused`).
    public struct Refused: Sendable {
        public var settlement: Settlement
        public var error: StoreError
    }

    /// The statuses `change` may start from, as a statement's parameter.
    static func from(_ change: StartLedgerMachine.Change) -> PostgresTextArray {
        PostgresTextArray(StartLedgerMachine.rule(for: change).from.map(\.rawValue).sorted())
    }

    /// Whether `change` may write `status` (to a row in one of its `from` statuses).
    static func writes(_ change: StartLedgerMachine.Change, _ status: Status) -> Bool {
        StartLedgerMachine.rule(for: change).to.contains(status)
    }

    /// Throws `StoreError(.refused)` when `change` may not write one of `statuses`.
    static func check(_ change: StartLedgerMachine.Change, writing statuses: some Sequence<Status>) throws {
        if let wrong = statuses.first(where: { !writes(change, $0) }) {
            throw StoreError(.refused, context: "start ledger: \(change.rawValue) may not write status \(wrong.rawValue)")
        }
    }

    /// The parameters naming `keys` (in order) as three text arrays.
    static func keyArrays(_ keys: [Key]) -> [(any PostgresEncodable)?] {
        [PostgresTextArray(keys.map(\.stream)), PostgresTextArray(keys.map(\.user)), PostgresTextArray(keys.map(\.device))]
    }

    /// The key of a row returned as `stream_id, user_id, device_id`.
    static func key(_ row: PostgresRow) throws -> Key {
        Key(stream: try row.decode("stream_id"), user: try row.decode("user_id"), device: try row.decode("device_id"))
    }

    /// The claim of a row returned as `stream_id, user_id, device_id, generation`.
    static func claimed(_ row: PostgresRow) throws -> Claim {
        Claim(try key(row), generation: try row.decode("generation"))
    }

    /// A row's `status`, which the schema's check constraint keeps to the machine's statuses.
    static func status(_ row: PostgresRow) throws -> Status {
        let text = try row.decode("status", as: String.self)
        guard let status = Status(rawValue: text) else {
            throw PostgresError(code: .decodeFailed, what: "decode column 'status'", message: "not a start ledger status: \(text)")
        }
        return status
    }

    /// Adds the scope's condition (one device or one user, as parameter `$n`) to a query of whole streams.
    static func narrow(_ sql: inout String, _ parameters: inout [(any PostgresEncodable)?], to scope: FanoutScope,
                       device: String, user: String) {
        switch scope {
        case .stream: break
        case .device(let id):
            sql += " AND \(device) = $\(parameters.count + 1)"
            parameters.append(id)
        case .user(let id):
            sql += " AND \(user) = $\(parameters.count + 1)"
            parameters.append(id)
        }
    }
}
