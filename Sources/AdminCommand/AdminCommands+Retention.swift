import CountdownAdmin
import CountdownMaintenance
import CountdownStore
import Foundation

extension AdminCommands {
    /// `retention --dry-run`: what the pruner would delete now, per table; `retention [--yes]`: runs it once now
    /// (what the workers do every `RETENTION_INTERVAL_SECONDS`).
    static func retention(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "retention", flags: ["json", "dry-run", "yes"], positionals: [])
        let dryRun = parsed.has("dry-run")
        let connections = try AdminConnections()
        defer { connections.close() }
        let settings = connections.config.retention
        let pruner = Pruner(store: connections.store, settings: settings)
        struct Output: Encodable {
            var dryRun: Bool
            var retentionDays: Double
            var auditRetentionDays: Double
            var batchRows: Int
            /// Rows by table: due now (dry run) or deleted.
            var tables: [String: Int]
            var total: Int
        }
        func emit(_ tables: [String: Int], heading: String, footer: String) {
            let output = Output(dryRun: dryRun, retentionDays: settings.days, auditRetentionDays: settings.auditDays, batchRows: settings.batchRows,
                                tables: tables, total: tables.values.reduce(0, +))
            AdminOutput(json: parsed.has("json")).emit(output) {
                heading + "\n" + AdminOutput.table(["TABLE", "ROWS"], tables.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] })
                    + "\n" + footer.replacingOccurrences(of: "{total}", with: String(output.total))
            }
        }
        let rules = "RETENTION_DAYS \(settings.days) (a stream's rows after it left scheduled; token invalidations), "
            + "AUDIT_RETENTION_DAYS \(settings.auditDays)"
        if dryRun {
            emit(try await pruner.preview(), heading: "rows the pruner would delete now (\(rules)):", footer: "{total} row(s) in all; --dry-run: nothing changed")
            return
        }
        guard try Confirmation.ask("Delete every row due under \(rules) now?", command: "retention", yes: parsed.has("yes")) else { return }
        let report = try await pruner.run()
        let tables = Dictionary(uniqueKeysWithValues: RetentionQueries.StreamTable.all.map { ($0.name, report.deleted[$0.name] ?? 0) }
            + RetentionQueries.AgedTable.all.map { ($0.name, report.deleted[$0.name] ?? 0) })
        emit(tables, heading: "rows deleted (\(rules), \(report.streams) stream(s)):", footer: "{total} row(s) deleted in batches of \(settings.batchRows)")
    }
}
