import Configuration
import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation

/// Prints results as text for people or as one JSON document with `--json`.
struct AdminOutput {
    let json: Bool

    func emit<T: Encodable>(_ value: T, text: () -> String) {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(text())
        }
    }

    static func time(_ date: Date?) -> String { date.map(TimeArgument.format) ?? "—" }

    static func relative(_ date: Date, to now: Date) -> String {
        // A stored time may be far off (PostgreSQL allows year 294276, and infinity): never a trapping conversion.
        let interval = date.timeIntervalSince(now)
        let seconds = interval.isFinite && abs(interval) < 1e12 ? Int(interval.rounded()) : (interval < 0 ? -999_999_999_999 : 999_999_999_999)
        let magnitude = abs(seconds)
        let text = magnitude < 120 ? "\(magnitude)s" : magnitude < 7200 ? "\(magnitude / 60)m" : "\(magnitude / 3600)h\((magnitude % 3600) / 60)m"
        return seconds >= 0 ? "in \(text)" : "\(text) ago"
    }

    /// Left-aligned columns.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        guard !rows.isEmpty else { return "  (none)" }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            ("  " + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }
}
