import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `perf record -e cpu-clock` attached to some processes for one measured phase (`countdown-bench system --perf`);
/// `stop()` returns the functions holding the most samples (self time, Swift names demangled), or nil when perf
/// is missing or failed. The data, perf's log and the full report stay in the directory.
final class CPUSampler {
    let dataPath: String
    let reportPath: String
    let logPath: String
    let process: SpawnedProcess?

    init(directory: String, name: String, pids: [Int32]) throws {
        dataPath = "\(directory)/perf-\(name).data"
        reportPath = "\(directory)/perf-\(name).txt"
        logPath = "\(directory)/perf-\(name).log"
        guard let perf = Self.which("perf") else {
            try Data("perf is not installed\n".utf8).write(to: URL(fileURLWithPath: logPath))
            process = nil
            return
        }
        process = try SpawnedProcess(
            perf, ["record", "-q", "-F", "499", "-e", "cpu-clock", "-g", "-o", dataPath, "-p", pids.map(String.init).joined(separator: ",")],
            stdout: .file(logPath), stderr: .file(logPath))
    }

    func stop(limit: Int = 25) async -> [SystemBenchResults.Sample]? {
        guard let process, let perf = Self.which("perf") else { return nil }
        process.signal(SIGINT)  // perf writes its data file on SIGINT
        if await process.exitStatus(within: .seconds(60)) == nil { process.signal(SIGKILL) }
        let raw = reportPath + ".raw"
        let report = try? SpawnedProcess(
            perf, ["report", "-i", dataPath, "--no-children", "--sort", "dso,symbol", "--stdio", "-g", "none", "--percent-limit", "0.3"],
            stdout: .file(raw), stderr: .null)
        _ = await report?.waitForExit(timeout: .seconds(300))
        if let demangler = Self.which("swift-demangle") ?? Self.which("swift") {
            let arguments = demangler.hasSuffix("demangle") ? ["--simplified"] : ["demangle", "--simplified"]
            let demangle = try? SpawnedProcess(demangler, arguments, stdin: .file(raw), stdout: .file(reportPath), stderr: .null)
            _ = await demangle?.waitForExit(timeout: .seconds(120))
            try? FileManager.default.removeItem(atPath: raw)
        } else {
            try? FileManager.default.moveItem(atPath: raw, toPath: reportPath)
        }
        let text = (try? String(contentsOfFile: reportPath, encoding: .utf8)) ?? ""
        let rows = text.split(whereSeparator: \.isNewline).compactMap { Self.row(String($0)) }
        return rows.isEmpty ? nil : Array(rows.prefix(limit))
    }

    /// One line of `perf report --stdio --sort dso,symbol`: "  12.34%  countdown-worker  [.] symbol".
    static func row(_ line: String) -> SystemBenchResults.Sample? {
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard fields.count == 3, fields[0].hasSuffix("%"), let percent = Double(fields[0].dropLast()) else { return nil }
        let rest = fields[2].drop { $0 == " " }
        guard rest.hasPrefix("["), let close = rest.firstIndex(of: "]") else { return nil }
        // perf pads the symbol column and may add further columns ("-      -") after it: the symbol ends at two spaces.
        var symbol = rest[rest.index(after: close)...].trimmingCharacters(in: .whitespaces)
        if let padding = symbol.range(of: "  ") { symbol = String(symbol[..<padding.lowerBound]) }
        return .init(percent: percent, dso: String(fields[1]), symbol: String(symbol.prefix(140)))
    }

    /// The path of an executable on PATH.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
