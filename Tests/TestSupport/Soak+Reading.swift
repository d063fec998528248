import Foundation
import Postgres
import Redis

extension Soak {
    /// The backend tables whose rows are shown (they grow: Countdown never deletes them).
    static let backendTables = ["streams", "stream_participants", "stream_reminders"]

    /// One reading: the tables, Redis, the workers' memory, and what happened since the previous one.
    func reading(elapsed: Double) async throws -> SoakSample {
        var rows: [String: Int] = [:]
        for table in tables + Self.backendTables {
            // Table names come from pg_class and were checked to be plain identifiers.
            rows[table] = try await system.query("SELECT count(*) AS n FROM \"\(table)\"")[0].decode("n", as: Int.self)
        }
        var bytes: [String: Int] = [:]
        for row in try await system.query("""
            SELECT relname::text AS name, pg_total_relation_size(oid)::bigint AS bytes FROM pg_class
            WHERE relnamespace = 'public'::regnamespace AND relname = ANY($1::text[])
            """, [PostgresTextArray(tables)]) {
            bytes[try row.decode("name")] = try row.decode("bytes", as: Int.self)
        }
        let memory = try await system.redis.command(["INFO", "memory"]).string ?? ""
        let usedMemory = memory.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
            .flatMap { Int($0.dropFirst("used_memory:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        let keys = Int(try await system.redis.command(["DBSIZE"]).integer ?? 0)
        var pruned = 0.0
        for worker in system.workers {
            pruned += await worker.metrics().filter { $0.key.hasPrefix("countdown_retention_deleted_rows_total") }.values.reduce(0, +)
        }
        let readings = interval
        interval = IntervalReadings()
        let sample = SoakSample(
            elapsed: (elapsed * 10).rounded() / 10,
            tableRows: rows.filter { tables.contains($0.key) }, tableBytes: bytes,
            backendRows: rows.filter { Self.backendTables.contains($0.key) },
            redisBytes: usedMemory, redisKeys: keys, workerRSSKB: system.workers.map { $0.usage()?.residentKB ?? 0 },
            starts: readings.starts, reminders: readings.reminders,
            startLatenessP99: readings.startLateness.isEmpty ? nil : percentile(readings.startLateness, 0.99),
            startLatenessMax: readings.startLateness.max(), reminderLatenessMax: readings.reminderLateness.max(),
            lost: counts.lost, duplicated: counts.duplicated, unexpected: counts.unexpected,
            pruned: Int(max(0, pruned - prunedSoFar)), streamsCreated: created)
        prunedSoFar = max(pruned, prunedSoFar)
        return sample
    }
}
