import Foundation

/// A soak's readings as text: one Markdown row per reading (what `scripts/soak` prints and docs/reliability.md
/// keeps), a per-table summary against the verdict, and a CSV line per reading with every table's rows and bytes.
public enum SoakTable {
    public static let header = """
        | min | streams | Countdown rows | Countdown MiB | ledger rows | sessions | Redis MiB | Redis keys | RSS MiB | starts | reminders | start late p99 s | late max s | pruned rows | lost | dup | unexp |
        |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
        """

    public static func row(_ sample: SoakSample) -> String {
        let cells: [String] = [
            String(format: "%.1f", sample.elapsed / 60), "\(sample.streamsCreated)", "\(sample.totalRows)",
            mib(sample.totalBytes), "\(sample.tableRows["countdown_start_ledger"] ?? 0)", "\(sample.tableRows["live_activity_sessions"] ?? 0)",
            mib(sample.redisBytes), "\(sample.redisKeys)", sample.workerRSSKB.map { String(format: "%.1f", Double($0) / 1024) }.joined(separator: " / "),
            "\(sample.starts)", "\(sample.reminders)", seconds(sample.startLatenessP99),
            seconds([sample.startLatenessMax, sample.reminderLatenessMax].compactMap { $0 }.max()), "\(sample.pruned)",
            "\(sample.lost)", "\(sample.duplicated)", "\(sample.unexpected)",
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }

    /// Each judged reading: its two windows' max, growth and whether it stayed within the rule.
    public static func summary(_ verdict: SoakVerdict) -> String {
        var lines = ["| reading | max, quarter before the half | max, last quarter | growth | within |", "|---|---|---|---|---|"]
        for series in verdict.series {
            lines.append("| \(series.name) | \(SoakVerdict.format(series.baseline, series.kind)) | \(SoakVerdict.format(series.final, series.kind)) | "
                         + String(format: "%+.1f %%", series.growthPercent) + " | \(series.flat ? "yes" : "NO") |")
        }
        return lines.joined(separator: "\n")
    }

    /// The CSV header for `tables` (the Countdown tables) and `workers` workers.
    public static func csvHeader(tables: [String], workers: Int) -> String {
        var columns = ["elapsed_s", "streams_created", "starts", "reminders", "start_lateness_p99_s", "start_lateness_max_s",
                       "reminder_lateness_max_s", "lost", "duplicated", "unexpected", "pruned_rows", "redis_used_bytes", "redis_keys"]
        columns += (0..<workers).map { "worker\($0)_rss_kb" }
        columns += Soak.backendTables.map { "\($0)_rows" }
        columns += tables.flatMap { ["\($0)_rows", "\($0)_bytes"] }
        return columns.joined(separator: ",")
    }

    public static func csvLine(_ sample: SoakSample, tables: [String], workers: Int) -> String {
        func optional(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "" }
        var cells = [String(format: "%.1f", sample.elapsed), "\(sample.streamsCreated)", "\(sample.starts)", "\(sample.reminders)",
                     optional(sample.startLatenessP99), optional(sample.startLatenessMax), optional(sample.reminderLatenessMax),
                     "\(sample.lost)", "\(sample.duplicated)", "\(sample.unexpected)", "\(sample.pruned)", "\(sample.redisBytes)",
                     "\(sample.redisKeys)"]
        cells += (0..<workers).map { $0 < sample.workerRSSKB.count ? "\(sample.workerRSSKB[$0])" : "" }
        cells += Soak.backendTables.map { "\(sample.backendRows[$0] ?? 0)" }
        cells += tables.flatMap { ["\(sample.tableRows[$0] ?? 0)", "\(sample.tableBytes[$0] ?? 0)"] }
        return cells.joined(separator: ",")
    }

    private static func mib(_ bytes: Int) -> String { String(format: "%.2f", Double(bytes) / 1_048_576) }
    private static func seconds(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "-" }
}
