import CountdownStore
import Foundation

/// Deletes Countdown's own rows once they have aged out (SPEC 12.3), never the backend's streams, users, devices,
/// participants or reminders: a stream's rows (`RetentionQueries.StreamTable.all`) `RETENTION_DAYS` after it first left
/// `scheduled`, and never while it is `scheduled`; audit rows after `AUDIT_RETENTION_DAYS`; token invalidations and
/// unnamed broadcast channels (`RetentionQueries.AgedTable.all`) after `RETENTION_DAYS`. Every statement deletes at most `RETENTION_BATCH_ROWS` rows by key in its own short transaction,
/// and each table is emptied batch by batch until a short batch, so nothing a burst needs is locked for long.
/// The worker runs it once per interval fleet-wide (`PrunerService`); `countdown-admin retention` runs or previews it.
public struct Pruner: Sendable {
    /// What one run deleted.
    public struct Report: Sendable, Equatable, Encodable {
        /// Rows deleted, by table name (tables with none are left out).
        public var deleted: [String: Int] = [:]
        /// Streams whose rows were deleted.
        public var streams = 0

        public var total: Int { deleted.values.reduce(0, +) }
    }

    /// Streams handled together: their ids go into each delete statement.
    static let streamsPerPass = 100

    private let store: StoreClient
    private let settings: RetentionSettings

    public init(store: StoreClient, settings: RetentionSettings) {
        self.store = store
        self.settings = settings
    }

    /// Deletes everything due now; `deleted` hears each statement's table and count as it goes (for metrics);
    /// `between` runs after each statement with how long it took (the worker gives way to bursts there).
    public func run(deleted: @Sendable (String, Int) -> Void = { _, _ in },
                    between: @Sendable (Duration) async -> Void = { _ in }) async throws -> Report {
        var report = Report()
        func count(_ table: String, _ rows: Int) {
            guard rows > 0 else { return }
            report.deleted[table, default: 0] += rows
            deleted(table, rows)
        }
        var streams: [String]
        repeat {
            streams = try await store.withConnection { [settings] in
                try RetentionQueries.agedStreams(olderThan: settings.seconds, limit: Self.streamsPerPass, on: $0)
            }
            if streams.isEmpty { break }
            for table in RetentionQueries.StreamTable.all {
                try await inBatches(between) { [streams] limit in
                    try await store.withConnection { try RetentionQueries.deleteRows(of: streams, from: table, limit: limit, on: $0) }
                } counted: { count(table.name, $0) }
            }
            report.streams += streams.count
        } while streams.count == Self.streamsPerPass
        for table in RetentionQueries.AgedTable.all {
            let seconds = table.age(retention: settings.seconds, audit: settings.auditSeconds)
            try await inBatches(between) { limit in
                try await store.withConnection { try RetentionQueries.deleteAged(table, olderThan: seconds, limit: limit, on: $0) }
            } counted: { count(table.name, $0) }
        }
        return report
    }

    /// What a run would delete now, by table name (every table, zeros included).
    public func preview() async throws -> [String: Int] {
        try await store.withConnection { [settings] in
            try RetentionQueries.due(streamsOlderThan: settings.seconds, auditOlderThan: settings.auditSeconds, on: $0)
        }
    }

    /// The age in seconds of each table's oldest row on the retention's clock (`RetentionQueries.oldestAges`).
    public func oldestAges() async throws -> [String: Double] {
        try await store.withConnection { try RetentionQueries.oldestAges(on: $0) }
    }

    /// Runs `delete` with the batch size until it deletes fewer rows than that, `between` after each statement.
    private func inBatches(_ between: @Sendable (Duration) async -> Void, _ delete: (Int) async throws -> Int,
                           counted: (Int) -> Void) async throws {
        while true {
            let started = ContinuousClock.now
            let rows = try await delete(settings.batchRows)
            counted(rows)
            await between(ContinuousClock.now - started)
            if rows < settings.batchRows { return }
        }
    }
}
