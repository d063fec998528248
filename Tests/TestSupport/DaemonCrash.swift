import Foundation

/// Sends `signal` (SIGKILL: a crash, no final write) to the daemon whose pid is the first line of `pidFile`, and
/// waits up to `timeout` seconds until it is gone. A daemon is no child of the test, so a zombie counts as gone.
/// Returns false when the pid file names no live process.
@discardableResult
public func crashDaemon(pidFile: String, signal: Int32 = SIGKILL, timeout: TimeInterval = 10) -> Bool {
    guard let pid = daemonPID(pidFile: pidFile) else { return false }
    return crashProcess(pid, signal: signal, timeout: timeout)
}

/// `crashDaemon` for a known pid.
@discardableResult
public func crashProcess(_ pid: pid_t, signal: Int32 = SIGKILL, timeout: TimeInterval = 10) -> Bool {
    guard kill(pid, signal) == 0 else { return false }
    let deadline = Date().addingTimeInterval(timeout)
    while !processIsGone(pid) && Date() < deadline { usleep(20_000) }
    return true
}

/// The pid on the first line of `pidFile` (redis-server's pid file, PostgreSQL's postmaster.pid), nil if none.
public func daemonPID(pidFile: String) -> pid_t? {
    guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
          let line = text.split(separator: "\n", omittingEmptySubsequences: false).first else { return nil }
    return pid_t(line.trimmingCharacters(in: .whitespaces))
}

/// Whether `pid` has exited (or is a zombie waiting for a parent that is not the test).
public func processIsGone(_ pid: pid_t) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
}
