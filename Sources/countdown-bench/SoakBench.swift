import Foundation
import TestSupport

/// `countdown-bench soak`: the fleet under steady churn with a short retention (TestSupport's `Soak`), a row per
/// reading on stdout as it is taken, then the per-table summary and the verdict line. The readings also go to
/// `--out` (readings.csv with every table's rows and bytes, readings.jsonl, report.md). Exits 1 when the verdict is
/// not a pass. Run it through scripts/soak, which starts the servers.
enum SoakBench {
    static let usage = """
        usage: countdown-bench soak [--minutes N] [--interval SECONDS] [--rate STREAMS_PER_SECOND] [--workers N]
                                    [--retention-days D] [--pruner-interval SECONDS] [--out DIR]
          --minutes          the run's length (default 60; a decimal)
          --interval         seconds between readings (default 30, 10 under 10 minutes)
          --rate             streams created per second (default 1)
          --workers          workers in the fleet (default 2)
          --retention-days   the workers' RETENTION_DAYS (default 0.002, about 3 minutes)
          --pruner-interval  the workers' RETENTION_INTERVAL_SECONDS (default 15)
          --out              where the readings go (default /tmp/countdown-soak-<UTC time>)
        """

    /// Runs the soak; returns the exit code, or throws an error in `arguments` (or an `--out` it cannot create).
    static func main(_ arguments: [String]) async throws -> Int32 {
        let (options, out) = try parse(arguments)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let children = BenchChildren.ofThisBenchmark()
        progress("soak: \(Int(options.seconds / 60)) min, a stream every \(1 / options.streamsPerSecond) s, RETENTION_DAYS \(options.retentionDays), "
                 + "pruner every \(options.prunerIntervalSeconds) s, \(options.workers) workers; readings in \(out)")
        let soak: Soak
        do {
            soak = try await Soak(options)
        } catch {
            progress("error: \(error)")
            return 1
        }
        children.record(soak.system.fake.process.pid, executable: soak.system.fake.process.executable)
        for worker in soak.system.workers { children.record(worker.pid, executable: worker.process.executable) }
        let csvPath = (out as NSString).appendingPathComponent("readings.csv")
        let jsonPath = (out as NSString).appendingPathComponent("readings.jsonl")
        let tables = soak.tables
        let workers = options.workers
        var csv = SoakTable.csvHeader(tables: tables, workers: workers) + "\n"
        var json = ""
        var table = SoakTable.header + "\n"
        say(SoakTable.header)
        let verdict: SoakVerdict
        do {
            verdict = try await soak.run { sample in
                let row = SoakTable.row(sample)
                say(row)
                table += row + "\n"
                csv += SoakTable.csvLine(sample, tables: tables, workers: workers) + "\n"
                if let encoded = try? JSONEncoder().encode(sample) { json += String(decoding: encoded, as: UTF8.self) + "\n" }
                try? csv.write(toFile: csvPath, atomically: true, encoding: .utf8)
                try? json.write(toFile: jsonPath, atomically: true, encoding: .utf8)
            }
        } catch {
            progress("error: \(error)")
            await soak.stop()
            return 1
        }
        await soak.stop()
        let report = "\(table)\n\(SoakTable.summary(verdict))\n\n\(verdict.line)\n"
        say("\n" + SoakTable.summary(verdict) + "\n\n" + verdict.line)
        try? report.write(toFile: (out as NSString).appendingPathComponent("report.md"), atomically: true, encoding: .utf8)
        progress("readings in \(out) (readings.csv, readings.jsonl, report.md)")
        return verdict.passed ? 0 : 1
    }

    static func parse(_ arguments: [String]) throws -> (options: SoakOptions, out: String) {
        let given = try BenchOptions(arguments)
        var options = SoakOptions.documentation(minutes: try given.double("minutes", default: 60, positive: true))
        options.sampleSeconds = try given.double("interval", default: options.sampleSeconds, positive: true)
        options.streamsPerSecond = try given.double("rate", default: options.streamsPerSecond, positive: true)
        options.retentionDays = try given.double("retention-days", default: options.retentionDays, positive: true)
        options.prunerIntervalSeconds = try given.int("pruner-interval", default: options.prunerIntervalSeconds)
        options.workers = try given.int("workers", default: options.workers)
        guard options.prunerIntervalSeconds >= 1, options.workers >= 1 else {
            throw BenchError("--pruner-interval and --workers must be at least 1")
        }
        // scripts/soak started a Redis for this run alone: its keys and memory are the soak's.
        options.ownRedis = false
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        return (options, try given.string("out", default: "/tmp/countdown-soak-\(stamp)"))
    }

    /// A line on stdout at once (the report is followed as it is written).
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
