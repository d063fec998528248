import Foundation
import Redis
import TestSupport

/// The system's counters at one moment of `countdown-bench system`; two of them make a phase's `Usage`.
struct SystemBenchSnapshot {
    var at: Double
    var postgresCPU: Double
    var redisCPU: Double
    var fakeCPU: Double
    var workerCPU: [Double]
    var workerSwitches: Int
    var logOffsets: [(path: String, offset: UInt64)]
    /// `countdown_pushes_total` summed over the workers, by "result/reason".
    var pushes: [String: Double]
    /// Redis's `INFO commandstats`: command → (calls, microseconds).
    var redisCommands: [String: (calls: Int, microseconds: Int)]

    /// Reads the processes measured: the fleet, the fake FCM, the postmaster (with its backends) and redis-server.
    static func take(
        workers: [SystemWorker], fakePID: Int32, postmasterPID: Int32?, redisPID: Int32?, redis: RedisClient
    ) async throws -> SystemBenchSnapshot {
        // The slower readings (HTTP, Redis) first, so the time and the CPU figures are read close together.
        let offsets = workers.map { (path: $0.logPath, offset: fileSize($0.logPath)) }
        var pushes: [String: Double] = [:]
        for worker in workers {
            for (key, value) in await worker.metrics() {
                guard let name = pushOutcome(key) else { continue }
                pushes[name, default: 0] += value
            }
        }
        let info = try await redis.command(["INFO", "commandstats"]).string ?? ""
        let usages = workers.map { $0.usage() }
        return SystemBenchSnapshot(
            at: Date().timeIntervalSince1970, postgresCPU: postgresCPUSeconds(postmaster: postmasterPID),
            redisCPU: redisPID.flatMap { ProcessUsage.cpuSeconds(pid: $0) } ?? 0, fakeCPU: ProcessUsage.cpuSeconds(pid: fakePID) ?? 0,
            workerCPU: usages.map { $0?.cpuSeconds ?? 0 }, workerSwitches: usages.map { $0?.contextSwitches ?? 0 }.reduce(0, +),
            logOffsets: offsets, pushes: pushes, redisCommands: commandStats(info))
    }

    /// What the phase from `before` to `self` cost; memory is read now, from the fleet's processes.
    func usage(since before: SystemBenchSnapshot, workers: [SystemWorker]) -> SystemBenchResults.Usage {
        let round = SystemBenchReport.rounded
        let memory = workers.map { $0.usage() }
        return SystemBenchResults.Usage(
            windowSeconds: round(max(at - before.at, 0.001), 2),
            workerCpuSeconds: zip(before.workerCPU, workerCPU).map { round($1 - $0, 2) },
            workerRssMB: memory.map { round(Double($0?.residentKB ?? 0) / 1024, 1) },
            workerPeakRssMB: memory.map { round(Double($0?.peakResidentKB ?? 0) / 1024, 1) },
            postgresCpuSeconds: round(postgresCPU - before.postgresCPU, 2), redisCpuSeconds: round(redisCPU - before.redisCPU, 2),
            fakeFcmCpuSeconds: round(fakeCPU - before.fakeCPU, 2),
            workerContextSwitches: max(0, workerSwitches - before.workerSwitches),
            workerWarnings: Self.warnings(since: before.logOffsets),
            redisCommandSeconds: Self.commandSeconds(before.redisCommands, redisCommands),
            pushesNotSent: pushes.compactMap { key, count in
                let earlier = before.pushes[key] ?? 0
                return !key.hasPrefix("accepted/") && count > earlier ? SystemBenchResults.Count(name: key, count: Int(count - earlier)) : nil
            }.sorted { $0.name < $1.name })
    }

    // MARK: Readings

    /// CPU of the postmaster, its live backends, and every backend it has reaped.
    static func postgresCPUSeconds(postmaster: Int32?) -> Double {
        guard let postmaster, let own = ProcessUsage.cpuSeconds(pid: postmaster, children: true) else { return 0 }
        return own + ProcessUsage.children(of: postmaster).compactMap { ProcessUsage.cpuSeconds(pid: $0) }.reduce(0, +)
    }

    /// "result/reason" of a `countdown_pushes_total{...}` metric key, nil for any other metric.
    static func pushOutcome(_ key: String) -> String? {
        guard key.hasPrefix("countdown_pushes_total{") else { return nil }
        let labels = metricLabels(key)
        return "\(labels["result"] ?? "?")/\(labels["reason"] ?? "")"
    }

    /// The `name="value"` labels of a metric key such as `name{a="1",b="x"}`.
    static func metricLabels(_ key: String) -> [String: String] {
        guard let open = key.firstIndex(of: "{") else { return [:] }
        var labels: [String: String] = [:]
        var rest = key[key.index(after: open)...]
        while let equals = rest.range(of: "=\"") {
            let name = rest[..<equals.lowerBound].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
            let valueStart = equals.upperBound
            guard let quote = rest[valueStart...].firstIndex(of: "\"") else { break }
            labels[name] = String(rest[valueStart..<quote])
            rest = rest[rest.index(after: quote)...]
        }
        return labels
    }

    /// `INFO commandstats` lines `cmdstat_<name>:calls=N,usec=M,...` as name → (calls, microseconds).
    static func commandStats(_ info: String) -> [String: (calls: Int, microseconds: Int)] {
        var stats: [String: (calls: Int, microseconds: Int)] = [:]
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[line.index(line.startIndex, offsetBy: 8)..<colon])
            var fields: [String: Int] = [:]
            for pair in line[line.index(after: colon)...].split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
            }
            if let calls = fields["calls"], let usec = fields["usec"] { stats[name] = (calls, usec) }
        }
        return stats
    }

    /// The commands that took most of Redis's time in between, most first.
    static func commandSeconds(
        _ before: [String: (calls: Int, microseconds: Int)], _ after: [String: (calls: Int, microseconds: Int)], limit: Int = 6
    ) -> [SystemBenchResults.RedisCommand] {
        after.compactMap { name, now -> (String, Int, Int)? in
            let earlier = before[name] ?? (0, 0)
            let spent = now.microseconds - earlier.microseconds
            return spent > 0 ? (name, now.calls - earlier.calls, spent) : nil
        }
        .sorted { $0.2 > $1.2 }
        .prefix(limit)
        .map { SystemBenchResults.RedisCommand(name: $0.0, calls: $0.1, seconds: SystemBenchReport.rounded(Double($0.2) / 1e6, 2)) }
    }

    /// The workers' warn and error log lines written since `offsets`, counted by "level: message", most first:
    /// a slow tail of a phase usually has its reason here (retries, transient errors, a settle that failed).
    static func warnings(since offsets: [(path: String, offset: UInt64)]) -> [SystemBenchResults.Count] {
        var counts: [String: Int] = [:]
        for (path, offset) in offsets {
            guard let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            try? handle.seek(toOffset: offset)
            let data = (try? handle.readToEnd()) ?? Data()
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard let entry = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any],
                      let level = entry["level"] as? String, level == "warn" || level == "error" else { continue }
                counts["\(level): \(entry["msg"] as? String ?? "?")", default: 0] += 1
            }
        }
        return counts.map { SystemBenchResults.Count(name: $0.key, count: $0.value) }.sorted { ($0.count, $1.name) > ($1.count, $0.name) }
    }

    static func fileSize(_ path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }
}
