import Foundation

/// What a live process has used so far, read from /proc.
public struct ProcessUsage: Sendable, Equatable {
    /// User plus system CPU time.
    public var cpuSeconds: Double
    /// VmRSS.
    public var residentKB: Int
    /// VmHWM: the most it was resident at once.
    public var peakResidentKB: Int
    /// Voluntary and involuntary context switches of the threads it has now (Linux keeps no total for threads that
    /// ended, so a phase in which threads exit reads low).
    public var contextSwitches: Int

    public init(cpuSeconds: Double, residentKB: Int, peakResidentKB: Int, contextSwitches: Int) {
        self.cpuSeconds = cpuSeconds
        self.residentKB = residentKB
        self.peakResidentKB = peakResidentKB
        self.contextSwitches = contextSwitches
    }

    /// The usage of process `pid`; nil when it is gone (or a zombie).
    public static func of(pid: Int32) -> ProcessUsage? {
        guard let cpu = cpuSeconds(pid: pid), let status = read("/proc/\(pid)/status") else { return nil }
        let fields = statusFields(status)
        guard let resident = fields["VmRSS"] else { return nil }
        return ProcessUsage(cpuSeconds: cpu, residentKB: resident, peakResidentKB: fields["VmHWM"] ?? resident,
                            contextSwitches: contextSwitches(pid: pid))
    }

    /// User plus system CPU seconds of `pid`, and of its reaped children when `children`; nil when it is gone.
    public static func cpuSeconds(pid: Int32, children: Bool = false) -> Double? {
        // After the command: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
        guard let fields = read("/proc/\(pid)/stat").flatMap(statFields)?.map({ Int($0) ?? 0 }), fields.count > 14 else { return nil }
        let ticks = fields[11] + fields[12] + (children ? fields[13] + fields[14] : 0)
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The pids whose parent is `parent`, such as a postmaster's backends.
    public static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = Int32(entry) else { return nil }
            return Self.parent(of: pid) == parent ? pid : nil
        }
    }

    /// The parent of `pid` (from /proc/<pid>/stat); nil when it is gone.
    public static func parent(of pid: Int32) -> Int32? {
        read("/proc/\(pid)/stat").flatMap(parent(statLine:))
    }

    /// The parent in a stat line: state(0) ppid(1) after the command.
    public static func parent(statLine text: String) -> Int32? {
        guard let fields = statFields(text), fields.count > 1 else { return nil }
        return Int32(fields[1])
    }

    /// The fields of a stat line after the command, which may hold spaces and parentheses.
    private static func statFields(_ text: String) -> [Substring]? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// `Name: value kB` lines of /proc/<pid>/status as name -> value.
    static func statusFields(_ text: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"),
                  let value = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap({ Int($0) })
            else { continue }
            fields[String(line[..<colon])] = value
        }
        return fields
    }

    private static func contextSwitches(pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            // A thread may end between the listing and the read.
            guard let status = read("/proc/\(pid)/task/\(task)/status") else { return total }
            let fields = statusFields(status)
            return total + (fields["voluntary_ctxt_switches"] ?? 0) + (fields["nonvoluntary_ctxt_switches"] ?? 0)
        }
    }

    /// A /proc file's text (read to the end: /proc files report size 0).
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
