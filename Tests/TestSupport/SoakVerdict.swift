import Foundation

/// Whether a soak stayed flat (SPEC 12.3: each reading grows less than 5 % over the run's second half, and nothing is
/// lost). Each reading's max over the last quarter of the run is held against its max over the quarter before the
/// half (the first quarter is the warm-up: tables fill up to their retention); a max, not a mean, so the top of the
/// pruner's saw-tooth is compared with the top. Growth is allowed 5 % plus a small absolute step per kind (a few
/// pages, rows or MiB), so a table of ten rows is not failed for an eleventh.
public struct SoakVerdict: Sendable, Equatable {
    /// What a series measures, with the absolute step it is allowed on top of 5 %.
    public enum Kind: Sendable, Equatable {
        case rows, tableBytes, totalBytes, redisBytes, keys, residentKB, seconds

        public var allowance: Double {
            switch self {
            case .rows: 50
            case .tableBytes: 64 * 1024
            case .totalBytes: 256 * 1024
            case .redisBytes: 1024 * 1024
            case .keys: 50
            case .residentKB: 8 * 1024
            case .seconds: 0.5
            }
        }
    }

    /// One reading judged.
    public struct Series: Sendable, Equatable {
        public var name: String
        public var kind: Kind
        /// Max over the quarter before the half, and over the last quarter.
        public var baseline: Double
        public var final: Double

        public var allowed: Double { baseline * 1.05 + kind.allowance }
        public var flat: Bool { final <= allowed }
        /// Growth from baseline to final, percent (0 when the baseline is 0).
        public var growthPercent: Double { baseline > 0 ? (final / baseline - 1) * 100 : 0 }
    }

    public static let rule = "each reading's max over the last quarter <= its max over the quarter before the half x 1.05 "
        + "+ a small step (50 rows, 64 KiB a table, 256 KiB all tables, 1 MiB Redis, 50 keys, 8 MiB RSS, 0.5 s lateness); "
        + "0 lost, 0 duplicated, 0 unexpected"

    public var series: [Series]
    public var lost: Int
    public var duplicated: Int
    public var unexpected: Int
    /// False when the run was too short to have readings in both windows.
    public var judged: Bool

    public var flat: Bool { judged && series.allSatisfy(\.flat) }
    public var passed: Bool { flat && lost == 0 && duplicated == 0 && unexpected == 0 }

    /// Judges `samples` (in time order; the run's length is the last one's `elapsed`).
    public static func judge(_ samples: [SoakSample]) -> SoakVerdict {
        let last = samples.last
        let length = last?.elapsed ?? 0
        let baseline = samples.filter { $0.elapsed > length / 4 && $0.elapsed <= length / 2 }
        let final = samples.filter { $0.elapsed > length * 3 / 4 }
        var verdict = SoakVerdict(series: [], lost: last?.lost ?? 0, duplicated: last?.duplicated ?? 0, unexpected: last?.unexpected ?? 0,
                                  judged: !baseline.isEmpty && !final.isEmpty)
        guard verdict.judged, let last else { return verdict }
        func add(_ name: String, _ kind: Kind, _ value: (SoakSample) -> Double?) {
            guard let before = baseline.compactMap(value).max() else { return }
            verdict.series.append(Series(name: name, kind: kind, baseline: before, final: final.compactMap(value).max() ?? 0))
        }
        for table in last.tableRows.keys.sorted() {
            add("\(table) rows", .rows) { Double($0.tableRows[table] ?? 0) }
            add("\(table) bytes", .tableBytes) { Double($0.tableBytes[table] ?? 0) }
        }
        add("all tables rows", .rows) { Double($0.totalRows) }
        add("all tables bytes", .totalBytes) { Double($0.totalBytes) }
        add("Redis memory", .redisBytes) { Double($0.redisBytes) }
        add("Redis keys", .keys) { Double($0.redisKeys) }
        for worker in last.workerRSSKB.indices {
            add("worker \(worker) RSS", .residentKB) { worker < $0.workerRSSKB.count ? Double($0.workerRSSKB[worker]) : nil }
        }
        add("start lateness p99", .seconds) { $0.startLatenessP99 }
        add("reminder lateness max", .seconds) { $0.reminderLatenessMax }
        return verdict
    }

    /// The last line of a soak's report: FLAT or NOT FLAT, the counts, what grew, and the rule.
    public var line: String {
        guard judged else { return "verdict: NOT JUDGED (too few readings for the windows; run longer). rule: \(Self.rule)" }
        let grown = series.filter { !$0.flat }.map { "\($0.name) \(Self.format($0.baseline, $0.kind)) -> \(Self.format($0.final, $0.kind))" }
        let shape = flat ? "FLAT" : "NOT FLAT (\(grown.joined(separator: "; ")))"
        return "verdict: \(shape); lost \(lost), duplicated \(duplicated), unexpected \(unexpected): \(passed ? "PASS" : "FAIL"). rule: \(Self.rule)"
    }

    /// A value in the unit a reader expects for its kind.
    public static func format(_ value: Double, _ kind: Kind) -> String {
        switch kind {
        case .rows, .keys: String(Int(value))
        case .tableBytes, .totalBytes, .redisBytes: String(format: "%.2f MiB", value / 1_048_576)
        case .residentKB: String(format: "%.1f MiB", value / 1024)
        case .seconds: String(format: "%.2f s", value)
        }
    }
}
