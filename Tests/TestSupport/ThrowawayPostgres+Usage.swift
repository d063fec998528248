import Foundation

extension ThrowawayPostgres {
    /// The postmaster's pid (postmaster.pid's first line); nil when the server is not running.
    public var postmasterPID: Int32? {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// CPU seconds of the postmaster, its live backends, and every backend it has reaped; 0 when it is not running.
    public func cpuSeconds() -> Double {
        guard let pid = postmasterPID else { return 0 }
        return ProcessUsage.children(of: pid).reduce(ProcessUsage.cpuSeconds(pid: pid, children: true) ?? 0) {
            $0 + (ProcessUsage.cpuSeconds(pid: $1) ?? 0)
        }
    }
}
