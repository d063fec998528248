import Foundation
import Postgres
import TestSupport

/// `--profile` (pg_stat_statements and the start ledger's writes) and `--perf` (CPU samples) of a measured phase.
extension SystemBench {
    static let ledgerWritesSQL = """
        SELECT n_tup_ins AS inserted, n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'countdown_start_ledger'
        """

    func resetStatementStatistics() async throws {
        guard options.profile else { return }
        try await system.execute("SELECT pg_stat_statements_reset()")
        ledgerWritesBefore = try await readLedgerWrites()
    }

    func readLedgerWrites() async throws -> SystemBenchResults.LedgerWrites? {
        try await system.query(Self.ledgerWritesSQL).first.map {
            .init(inserted: try $0.decode("inserted"), updated: try $0.decode("updated"), hotUpdated: try $0.decode("hot"))
        }
    }

    /// Rows the start ledger gained and updated during the phase, and how many updates were HOT (no new index
    /// entry). Backends report their counts within a second or so of a transaction, so this waits two.
    func ledgerWrites() async throws -> SystemBenchResults.LedgerWrites? {
        guard options.profile else { return nil }
        try await Task.sleep(for: .seconds(2))
        guard let after = try await readLedgerWrites() else { return nil }
        let before = ledgerWritesBefore ?? .init(inserted: 0, updated: 0, hotUpdated: 0)
        return .init(inserted: after.inserted - before.inserted, updated: after.updated - before.updated, hotUpdated: after.hotUpdated - before.hotUpdated)
    }

    func topStatements(limit: Int = 8) async throws -> [SystemBenchResults.Statement]? {
        guard options.profile else { return nil }
        let rows = try await system.query("""
            SELECT calls, round(total_exec_time::numeric, 0)::float8 AS total, round(mean_exec_time::numeric, 2)::float8 AS mean,
                   round(total_plan_time::numeric, 0)::float8 AS plan, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
            FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
            ORDER BY total_exec_time + total_plan_time DESC LIMIT $1
            """, [limit])
        return try rows.map {
            .init(calls: try $0.decode("calls"), totalMs: try $0.decode("total"), meanMs: try $0.decode("mean"), planMs: try $0.decode("plan"),
                  query: try $0.decode("query"))
        }
    }

    /// Samples the workers (printed), the fake FCM and PostgreSQL's processes (their reports kept beside the
    /// workers', as `perf-<name>-fake.txt` and `perf-<name>-postgres.txt`; backends are sampled if they were
    /// connected when the phase began, which the workers' pools are). Nil without `--perf`.
    func startSampling(_ name: String) throws -> PhaseSamplers? {
        guard let directory = options.perfDirectory else { return nil }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let postgres = postmasterPID.map { [$0] + ProcessUsage.children(of: $0) } ?? []
        return PhaseSamplers(
            workers: try CPUSampler(directory: directory, name: name, pids: fleet.map(\.pid)),
            fake: try CPUSampler(directory: directory, name: name + "-fake", pids: [system.fake.process.pid]),
            postgres: postgres.isEmpty ? nil : try CPUSampler(directory: directory, name: name + "-postgres", pids: postgres))
    }

    /// The samplers of one phase; `stop` returns the workers' rows.
    struct PhaseSamplers {
        let workers: CPUSampler
        let fake: CPUSampler
        let postgres: CPUSampler?

        func stop() async -> [SystemBenchResults.Sample]? {
            _ = await fake.stop()
            _ = await postgres?.stop()
            return await workers.stop()
        }
    }
}
