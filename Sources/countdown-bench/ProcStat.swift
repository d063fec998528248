import Foundation

/// A process's parent, from `/proc/<pid>/stat` (`ProcessUsage` reads the rest): the bench finds PostgreSQL's
/// postmaster as a backend's parent.
enum ProcStat {
    static func parent(of pid: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parent(statLine: text)
    }

    /// The parent in a stat line: the fields after the command (which may hold spaces and parentheses) begin
    /// state(0) ppid(1).
    static func parent(statLine text: String) -> Int32? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}
