import Foundation
import Postgres

/// `countdown_audit`: every operator action, allowed or refused, from `countdown-console` and `countdown-admin`.
public enum AuditQueries {
    /// One audit row. `outcome` is `done: <what>`, `refused: <why>`, `failed: <why>`, or `started: <what>` for an
    /// action whose end was never recorded (the row is written before the action and completed after it).
    public struct Entry: Sendable, Equatable, Codable {
        public var id: Int
        public var at: Date
        public var actor: String
        public var role: String
        public var action: String
        public var target: String
        public var reason: String
        public var outcome: String

        public init(id: Int = 0, at: Date = Date(), actor: String, role: String, action: String, target: String, reason: String, outcome: String) {
            self.id = id
            self.at = at
            self.actor = actor
            self.role = role
            self.action = action
            self.target = target
            self.reason = reason
            self.outcome = outcome
        }
    }

    /// Writes a row (texts cut to 2,000 characters; the time is PostgreSQL's `now()`); returns its id.
    @discardableResult
    public static func record(_ entry: Entry, on connection: PostgresConnection) throws -> Int {
        try connection.query("""
            INSERT INTO countdown_audit (actor, role, action, target, reason, outcome)
            VALUES (left($1, 2000), left($2, 2000), left($3, 2000), left($4, 2000), left($5, 2000), left($6, 2000)) RETURNING id
            """, [entry.actor, entry.role, entry.action, entry.target, entry.reason, entry.outcome]).first?.decode("id", as: Int.self) ?? 0
    }

    /// Sets the outcome of row `id` (an action audited before it was done, or a summary row counting on).
    public static func setOutcome(_ outcome: String, ofRow id: Int, on connection: PostgresConnection) throws {
        try connection.execute("UPDATE countdown_audit SET outcome = left($2, 2000) WHERE id = $1", [id, outcome])
    }

    /// Newest first, at most `limit`; `before` (an id) pages back through older rows.
    public static func list(limit: Int, before: Int? = nil, on connection: PostgresConnection) throws -> [Entry] {
        try connection.query("""
            SELECT \(columns) FROM countdown_audit
            WHERE $1::bigint IS NULL OR id < $1 ORDER BY id DESC LIMIT $2
            """, [before, limit]).map(entry)
    }

    /// The columns an `Entry` is read from, as `entry` reads them.
    static let columns = "id, at, actor, role, action, target, reason, outcome"

    /// A row of `columns`.
    static func entry(_ row: PostgresRow) throws -> Entry {
        Entry(id: try row.decode("id"), at: try row.decode("at"), actor: try row.decode("actor"), role: try row.decode("role"),
              action: try row.decode("action"), target: try row.decode("target"), reason: try row.decode("reason"),
              outcome: try row.decode("outcome"))
    }
}
