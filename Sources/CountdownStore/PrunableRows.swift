/// The seam of the pruner (SPEC 12.3) to the database: each call one short statement (`RetentionQueries`).
public protocol PrunableRows: Sendable {
    /// Streams whose rows are due, the longest-ended first (`RetentionQueries.agedStreams`).
    func agedStreams(olderThan seconds: Double, limit: Int) async throws -> [String]
    /// Deletes at most `limit` of `streams`' rows from `table`; returns how many.
    func deleteRows(of streams: [String], from table: RetentionQueries.StreamTable, limit: Int) async throws -> Int
    /// Deletes at most `limit` rows of `table` older than `seconds`; returns how many.
    func deleteAged(_ table: RetentionQueries.AgedTable, olderThan seconds: Double, limit: Int) async throws -> Int
    /// How many rows each table would lose now, by table name.
    func retentionDue(streamsOlderThan seconds: Double, auditOlderThan auditSeconds: Double) async throws -> [String: Int]
    /// The age of each table's oldest row on the retention's clock, by table name.
    func retentionOldestAges() async throws -> [String: Double]
}
