import Postgres

/// The pruner's SQL (SPEC 12.3): which streams' rows have aged out, and deletes in bounded batches by key, each its
/// own short statement, touching only Countdown's own rows. A stream's rows are deleted only while the stream is
/// not `scheduled`, checked again in every delete.
public enum RetentionQueries {
    /// A table whose rows belong to one stream and go with it, `RETENTION_DAYS` after the stream first left
    /// `scheduled`. `key` is what a batch deletes by (the primary key, or `id`).
    public struct StreamTable: Sendable, Hashable {
        public let name: String
        let key: [String]

        /// Every table with a stream's rows, in the order the pruner empties them (the progress row, then the
        /// pruner's own record of when the stream left `scheduled`, last: a run cut short finds the stream again).
        /// `live_activity_sessions` is the contract table: only the sessions of streams that left `scheduled` go
        /// (their end claims with them, by its foreign key), with their older activities (`countdown_activity_sessions`).
        /// A stream that leaves `scheduled` again later gets a new `countdown_stream_ends` row from the trigger.
        /// `countdown_broadcast_channels`: the channel keeper deletes a stream's channel (and its row) after the end's
        /// dismissal time; a row still there by now is one the keeper could not finish (Apple kept refusing the
        /// deletion) or never saw (`APNS_BROADCAST` turned off since). Its channel, if Apple still has it, is then
        /// named by no row: the keeper's orphan sweep deletes it at Apple.
        public static let all: [StreamTable] = [
            StreamTable(name: "countdown_start_ledger", key: ["stream_id", "user_id", "device_id"]),
            StreamTable(name: "countdown_reminder_deliveries", key: ["stream_id", "device_id"]),
            StreamTable(name: "countdown_reminder_sends", key: ["ctid"]),
            StreamTable(name: "countdown_reminder_claims", key: ["id"]),
            StreamTable(name: "countdown_session_deliveries", key: ["stream_id", "device_id", "channel", "activity_id"]),
            StreamTable(name: "live_activity_sessions", key: ["stream_id", "device_id"]),
            StreamTable(name: "countdown_activity_sessions", key: ["stream_id", "device_id", "activity_id"]),
            StreamTable(name: "countdown_retired_sessions", key: ["stream_id", "device_id", "live_activity_token"]),
            StreamTable(name: "countdown_end_attempts", key: ["stream_id", "device_id", "activity_id"]),
            StreamTable(name: "countdown_undeliverable_ends", key: ["id"]),
            StreamTable(name: "countdown_planned_start_history", key: ["id"]),
            StreamTable(name: "countdown_broadcast_channels", key: ["id"]),
            StreamTable(name: "countdown_stream_progress", key: ["stream_id"]),
            StreamTable(name: "countdown_stream_ends", key: ["stream_id"]),
        ]
    }

    /// A table whose rows go a fixed time after they were written (`column`), deleted by `key`.
    public struct AgedTable: Sendable, Hashable {
        public let name: String
        let column: String
        var key = "id"

        /// Audit rows go after `AUDIT_RETENTION_DAYS`.
        public static let audit = AgedTable(name: "countdown_audit", column: "at")
        /// Cleared tokens go after `RETENTION_DAYS` (the restore window of `countdown-admin tokens restore`).
        public static let tokenInvalidations = AgedTable(name: "countdown_token_invalidations", column: "invalidated_at")
        /// Channels Apple listed that no row named go after `RETENTION_DAYS`: the channel keeper deletes each at Apple
        /// minutes after it was first seen, or forgets it once Apple no longer lists it, so a row this old is one the
        /// keeper stopped looking at (`APNS_BROADCAST` turned off). A channel still listed is noted again when seen.
        public static let broadcastOrphans = AgedTable(name: "countdown_broadcast_orphans", column: "first_seen_at", key: "channel_id")

        /// Every aged table, in the order the pruner empties them.
        public static let all: [AgedTable] = [audit, tokenInvalidations, broadcastOrphans]

        /// The age after which this table's rows go: `AUDIT_RETENTION_DAYS` for the audit, `RETENTION_DAYS` for the rest.
        public func age(retention seconds: Double, audit auditSeconds: Double) -> Double { self == .audit ? auditSeconds : seconds }
    }

    /// Streams not `scheduled` whose rows are due (first left `scheduled` more than `seconds` ago; the pruner deletes
    /// the `countdown_stream_ends` row with the stream's other rows, so a pruned stream is not found again),
    /// the longest-ended first, at most `limit`.
    public static func agedStreams(olderThan seconds: Double, limit: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT e.stream_id FROM countdown_stream_ends e JOIN streams s ON s.id = e.stream_id
            WHERE e.pruned_at IS NULL AND e.left_scheduled_at < now() - make_interval(secs => $1::float8) AND s.status <> 'scheduled'
            ORDER BY e.left_scheduled_at LIMIT $2
            """, [seconds, limit]).map { try $0.decode("stream_id") }
    }

    /// Deletes at most `limit` rows of `streams` from `table` (of streams that are still not `scheduled`); returns
    /// how many.
    public static func deleteRows(of streams: [String], from table: StreamTable, limit: Int, on connection: PostgresConnection) throws -> Int {
        guard !streams.isEmpty else { return 0 }
        let key = table.key.joined(separator: ", ")
        return try connection.execute("""
            DELETE FROM \(table.name) WHERE (\(key)) IN (
                SELECT \(key) FROM \(table.name) t
                WHERE t.stream_id = ANY($1::text[])
                  AND EXISTS (SELECT 1 FROM streams s WHERE s.id = t.stream_id AND s.status <> 'scheduled')
                LIMIT $2)
            """, [PostgresTextArray(streams), limit])
    }

    /// Deletes at most `limit` rows of `table` written more than `seconds` ago, the oldest first; returns how many.
    public static func deleteAged(_ table: AgedTable, olderThan seconds: Double, limit: Int, on connection: PostgresConnection) throws -> Int {
        try connection.execute("""
            DELETE FROM \(table.name) WHERE \(table.key) IN (
                SELECT \(table.key) FROM \(table.name) WHERE \(table.column) < now() - make_interval(secs => $1::float8) ORDER BY \(table.column) LIMIT $2)
            """, [seconds, limit])
    }

    /// How many rows each table would lose now (what `countdown-admin retention --dry-run` prints), by table name.
    public static func due(streamsOlderThan seconds: Double, auditOlderThan auditSeconds: Double,
                           on connection: PostgresConnection) throws -> [String: Int] {
        var due: [String: Int] = [:]
        for table in StreamTable.all {
            due[table.name] = try connection.query("""
                SELECT count(*) AS n FROM \(table.name) t
                JOIN countdown_stream_ends e ON e.stream_id = t.stream_id JOIN streams s ON s.id = t.stream_id
                WHERE e.pruned_at IS NULL AND e.left_scheduled_at < now() - make_interval(secs => $1::float8) AND s.status <> 'scheduled'
                """, [seconds]).first?.decode("n", as: Int.self) ?? 0
        }
        for table in AgedTable.all {
            let age = table.age(retention: seconds, audit: auditSeconds)
            due[table.name] = try connection.query(
                "SELECT count(*) AS n FROM \(table.name) WHERE \(table.column) < now() - make_interval(secs => $1::float8)", [age]
            ).first?.decode("n", as: Int.self) ?? 0
        }
        return due
    }

    /// The age in seconds of each table's oldest row on the retention's clock, by table name (0: none): for a
    /// stream's tables, since the longest-ended stream not yet pruned left `scheduled` (the same for each of them);
    /// for the audit and the token invalidations, since the oldest row was written. Each an index read.
    public static func oldestAges(on connection: PostgresConnection) throws -> [String: Double] {
        let streams = try connection.query("""
            SELECT extract(epoch FROM now() - e.left_scheduled_at)::float8 AS age FROM countdown_stream_ends e JOIN streams s ON s.id = e.stream_id
            WHERE e.pruned_at IS NULL AND s.status <> 'scheduled' ORDER BY e.left_scheduled_at LIMIT 1
            """).first?.decode("age", as: Double.self) ?? 0
        var ages = Dictionary(uniqueKeysWithValues: StreamTable.all.map { ($0.name, streams) })
        for table in AgedTable.all {
            ages[table.name] = try connection.query(
                "SELECT coalesce(extract(epoch FROM now() - min(\(table.column))), 0)::float8 AS age FROM \(table.name)"
            ).first?.decode("age", as: Double.self) ?? 0
        }
        return ages
    }
}
