import Foundation
import Postgres

extension ConsoleReadQueries {
    /// One thing a search found.
    public struct SearchMatch: Sendable, Equatable, Codable {
        /// `stream`, `device` or `user`.
        public var kind: String
        public var id: String
        /// The stream's title, the user's name, the device's platform.
        public var label: String
        /// How it matched: `id` (the whole id), `id prefix`, `title` or `name` (containing the query, any case).
        public var how: String
    }

    /// Streams, devices and users whose id is `query`, or starts with it, and streams whose title and users whose
    /// name contain it (any case): exact ids first, at most `limit` of each other way. Prefixes and names scan their
    /// table when nothing matches (a few hundred milliseconds at a million devices): this is a support search, not
    /// a page the fleet waits on.
    public static func search(_ query: String, limit: Int, on connection: PostgresConnection) throws -> [SearchMatch] {
        let pattern = "%" + likeEscaped(query) + "%"
        return try connection.query("""
            SELECT kind, id, label, how FROM (
                (SELECT 'stream' AS kind, id, title AS label, 'id' AS how, 0 AS rank FROM streams WHERE id = $1)
                UNION ALL (SELECT 'device', device_id, platform, 'id', 0 FROM devices WHERE device_id = $1)
                UNION ALL (SELECT 'user', id, display_name, 'id', 0 FROM users WHERE id = $1)
                UNION ALL (SELECT 'stream', id, title, 'id prefix', 1 FROM streams WHERE starts_with(id, $1) AND id <> $1 ORDER BY id LIMIT $2)
                UNION ALL (SELECT 'device', device_id, platform, 'id prefix', 1 FROM devices
                           WHERE starts_with(device_id, $1) AND device_id <> $1 ORDER BY device_id LIMIT $2)
                UNION ALL (SELECT 'user', id, display_name, 'id prefix', 1 FROM users WHERE starts_with(id, $1) AND id <> $1 ORDER BY id LIMIT $2)
                UNION ALL (SELECT 'stream', id, title, 'title', 2 FROM streams WHERE title ILIKE $3 AND NOT starts_with(id, $1)
                           ORDER BY planned_start_at DESC, id LIMIT $2)
                UNION ALL (SELECT 'user', id, display_name, 'name', 2 FROM users WHERE display_name ILIKE $3 AND NOT starts_with(id, $1)
                           ORDER BY id LIMIT $2)
            ) AS found ORDER BY rank, kind, id
            """, [query, limit, pattern]).map {
            SearchMatch(kind: try $0.decode("kind"), id: try $0.decode("id"), label: try $0.decode("label"), how: try $0.decode("how"))
        }
    }

    /// `text` with `\`, `%` and `_` escaped for `LIKE`.
    static func likeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "\\" || character == "%" || character == "_" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    /// A stream in a list.
    public struct StreamListing: Sendable, Equatable, Codable {
        public var id: String
        public var title: String
        public var status: String
        public var plannedStartAt: Date
        public var participants: Int
    }

    /// Streams of `status`, by planned start (then id), planned within the next `startingWithinSeconds` when given,
    /// after the stream `after` (the last of the previous page) when given; at most `limit`. Reads the index on
    /// (status, planned_start_at).
    public static func streams(status: String, startingWithinSeconds: Int?, after: String?, limit: Int,
                               on connection: PostgresConnection) throws -> [StreamListing] {
        try connection.query("""
            SELECT s.id, s.title, s.status, s.planned_start_at,
                   (SELECT count(*) FROM stream_participants p WHERE p.stream_id = s.id)::int AS participants
            FROM streams s
            WHERE s.status = $1
              AND ($2::int IS NULL OR s.planned_start_at BETWEEN now() AND now() + make_interval(secs => $2::int))
              AND ($3::text IS NULL OR (s.planned_start_at, s.id) > (SELECT a.planned_start_at, a.id FROM streams a WHERE a.id = $3))
            ORDER BY s.planned_start_at, s.id LIMIT $4
            """, [status, startingWithinSeconds, after, limit]).map {
            StreamListing(id: try $0.decode("id"), title: try $0.decode("title"), status: try $0.decode("status"),
                          plannedStartAt: try $0.decode("planned_start_at"), participants: try $0.decode("participants"))
        }
    }
}
