import Foundation
import Postgres

/// `countdown_pause`: whether each job kind's claiming is paused, by whom, why and since when (SPEC 10.3). The
/// truth the workers mirror into Redis; `countdown-admin pause|resume|stats`, `/metrics` and the operator console
/// read and write it here.
public enum PauseQueries {
    /// One kind's state.
    public struct Entry: Sendable, Equatable, Codable {
        public var kind: String
        public var paused: Bool
        /// Who paused or resumed it (e.g. `countdown-admin (alice)`, a console user).
        public var actor: String
        /// Why it was paused ("" when no reason was given, or for a resume).
        public var reason: String
        /// When it was paused (or resumed), by PostgreSQL's clock.
        public var since: Date

        public init(kind: String, paused: Bool, actor: String, reason: String, since: Date) {
            self.kind = kind
            self.paused = paused
            self.actor = actor
            self.reason = reason
            self.since = since
        }
    }

    /// Pauses `kinds`; a kind already paused keeps its `since` and takes the new actor and reason. Returns the
    /// rows written.
    @discardableResult
    public static func pause(kinds: [String], actor: String, reason: String, on connection: PostgresConnection) throws -> [Entry] {
        guard !kinds.isEmpty else { return [] }
        return try decode(connection.query("""
            INSERT INTO countdown_pause (kind, paused, actor, reason) SELECT k, true, $2, $3 FROM unnest($1::text[]) AS t(k)
            ON CONFLICT (kind) DO UPDATE SET paused = true, actor = EXCLUDED.actor, reason = EXCLUDED.reason,
                since = CASE WHEN countdown_pause.paused THEN countdown_pause.since ELSE now() END
            RETURNING kind, paused, actor, reason, since
            """, [PostgresTextArray(kinds), actor, reason]))
    }

    /// Resumes `kinds` (nil: every paused kind). Returns the rows written (kinds that were paused, or not yet
    /// known here: a resume is recorded so every worker resumes the kind in Redis too).
    @discardableResult
    public static func resume(kinds: [String]?, actor: String, on connection: PostgresConnection) throws -> [Entry] {
        let rows: PostgresRows
        if let kinds {
            guard !kinds.isEmpty else { return [] }
            rows = try connection.query("""
                INSERT INTO countdown_pause (kind, paused, actor, reason) SELECT k, false, $2, '' FROM unnest($1::text[]) AS t(k)
                ON CONFLICT (kind) DO UPDATE SET paused = false, actor = EXCLUDED.actor, reason = '',
                    since = CASE WHEN countdown_pause.paused THEN now() ELSE countdown_pause.since END
                RETURNING kind, paused, actor, reason, since
                """, [PostgresTextArray(kinds), actor])
        } else {
            rows = try connection.query("""
                UPDATE countdown_pause SET paused = false, actor = $1, reason = '', since = now() WHERE paused
                RETURNING kind, paused, actor, reason, since
                """, [actor])
        }
        return try decode(rows)
    }

    /// Every kind's recorded state, by kind.
    public static func all(on connection: PostgresConnection) throws -> [Entry] {
        try decode(connection.query("SELECT kind, paused, actor, reason, since FROM countdown_pause ORDER BY kind"))
    }

    /// The kinds paused now, by kind.
    public static func paused(on connection: PostgresConnection) throws -> [Entry] {
        try all(on: connection).filter(\.paused)
    }

    private static func decode(_ rows: PostgresRows) throws -> [Entry] {
        try rows.map { row in
            Entry(kind: try row.decode("kind"), paused: try row.decode("paused"), actor: try row.decode("actor"),
                  reason: try row.decode("reason"), since: try row.decode("since"))
        }.sorted { $0.kind < $1.kind }
    }
}
