import Foundation
import Postgres

/// `countdown_quarantine`: rows the worker could not read or plan, with the reason, kept until an operator retries
/// or drops them (or the row is fixed and planned again).
public enum QuarantineQueries {
    /// What is quarantined: a stream (its state cannot be read or planned) or one outbox row.
    public enum Kind: String, Sendable, CaseIterable { case stream, outbox }

    /// One quarantined row.
    public struct Entry: Sendable, Equatable, Codable {
        public var kind: String
        public var key: String
        public var foundBy: String
        public var reason: String
        public var firstSeenAt: Date
        public var lastSeenAt: Date
        public var seenCount: Int
    }

    /// Records (or, when already there, counts again) a quarantined row.
    public static func record(_ kind: Kind, key: String, foundBy: String, reason: String, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO countdown_quarantine (kind, key, found_by, reason) VALUES ($1, $2, $3, left($4, 2000))
            ON CONFLICT (kind, key) DO UPDATE SET found_by = EXCLUDED.found_by, reason = EXCLUDED.reason,
                last_seen_at = now(), seen_count = countdown_quarantine.seen_count + 1
            """, [kind.rawValue, key, foundBy, reason])
    }

    /// Every quarantined row, oldest first.
    public static func list(on connection: PostgresConnection) throws -> [Entry] {
        try connection.query("""
            SELECT kind, key, found_by, reason, first_seen_at, last_seen_at, seen_count FROM countdown_quarantine
            ORDER BY first_seen_at, kind, key
            """).map { row in
            Entry(kind: try row.decode("kind"), key: try row.decode("key"), foundBy: try row.decode("found_by"),
                  reason: try row.decode("reason"), firstSeenAt: try row.decode("first_seen_at"),
                  lastSeenAt: try row.decode("last_seen_at"), seenCount: try row.decode("seen_count"))
        }
    }

    /// Removes the entries of `keys` (`nil`: every entry), of `kind` only when given; returns how many there were.
    @discardableResult
    public static func remove(_ kind: Kind? = nil, keys: [String]?, on connection: PostgresConnection) throws -> Int {
        if keys?.isEmpty == true { return 0 }
        return try connection.execute("""
            DELETE FROM countdown_quarantine WHERE ($1::text IS NULL OR kind = $1) AND ($2::text[] IS NULL OR key = ANY($2::text[]))
            """, [kind?.rawValue, keys.map { PostgresTextArray($0) }])
    }

    /// How many rows are quarantined.
    public static func count(on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*) AS n FROM countdown_quarantine").first?.decode("n", as: Int.self) ?? 0
    }
}
