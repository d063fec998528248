import CountdownAdmin
import CountdownMaintenance
import CountdownStore
import Foundation

extension AdminCommands {
    /// `restore-guard --since T --yes`: after PostgreSQL was restored from a backup taken at T, records the starts and
    /// reminders of [T, now] as sent so none goes out twice, and lets the fleet claim again; `restore-guard --none --yes`
    /// only lets it claim again (SPEC 12.4). Refuses, changing nothing, without --since (or --none), without --yes, or
    /// with a time in the future.
    static func restoreGuard(_ arguments: [String]) async throws {
        let parsed = try parse(arguments, "restore-guard", flags: ["json", "yes", "none"], values: ["since"], positionals: [])
        let none = parsed.has("none")
        guard none != (parsed.flags["since"] != nil) else {
            throw UsageError(none ? "give --since or --none, not both" : "restore-guard needs --since T (the backup's time), or --none")
        }
        let since = try parsed.flags["since"].map { try SinceArgument.parse($0) }
        guard parsed.has("yes") else {
            throw UsageError("restore-guard records starts and reminders as sent and changes what the whole fleet does: pass --yes")
        }
        let connections = try AdminConnections()
        defer { connections.close() }
        let guardian = RestoreGuard(database: connections.store, watermark: LedgerWatermark(redis: connections.redis, namespace: connections.config.namespace),
                                    settings: connections.config.flow, transport: connections.config.pushTransport)
        let before = try await LedgerWatermark(redis: connections.redis, namespace: connections.config.namespace).read()
        guard let since else {
            try await guardian.clear()
            struct Cleared: Encodable { var cleared: Bool; var wasTripped: Bool }
            AdminOutput(json: parsed.has("json")).emit(Cleared(cleared: true, wasTripped: before.tripped)) {
                "the fleet's ledger watermark is cleared" + (before.tripped ? " (it was tripped: \(before.record ?? ""))" : "")
                    + "; nothing was recorded as sent, and the workers claim starts, backfills and reminders again"
            }
            return
        }
        if try await guardian.isFuture(since) {
            throw UsageError("--since \(parsed.flags["since"] ?? "") is in the future on the database's clock; give the backup's time")
        }
        let report = try await guardian.run(since: since)
        FileHandle.standardError.write(Data("""
            {"level":"warn","msg":"restore guard recorded starts and reminders as sent without sending them","starts_assumed":\(report.startsAssumed),\
            "reminders_assumed":\(report.remindersAssumed),"streams":\(report.streams)}

            """.utf8))
        AdminOutput(json: parsed.has("json")).emit(report) {
            """
            restore guard since \(parsed.flags["since"] ?? ""):
              streams whose start window overlaps the span: \(report.streams)
              starts recorded as sent (assumed_sent, restored): \(report.startsAssumed) (\(report.byPlatform.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))
              reminders recorded as sent: \(report.remindersAssumed)
            a start that really was not sent before the restore is given up (counted above); updates and ends still go.
            the fleet's ledger watermark is cleared\(before.tripped ? " (it was tripped: \(before.record ?? ""))" : ""): the workers claim again
            """
        }
    }
}
