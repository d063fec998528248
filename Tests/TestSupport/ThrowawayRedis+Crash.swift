import Foundation

extension ThrowawayRedis {
    /// SIGKILL to the server (a crash: no final AOF write, so `appendfsync` decides what survives), waiting until it
    /// is gone (up to 10 s, polling: no thread is held); `start()` brings it back from its AOF.
    public func crash() async throws {
        let pidFile = (try? String(contentsOfFile: "\(directory)/redis.pid", encoding: .utf8)) ?? ""
        guard let pid = pid_t(pidFile.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError("redis-server on :\(port) is not running (no pid file)")
        }
        guard kill(pid, SIGKILL) == 0 else { throw HarnessError("redis-server on :\(port) (pid \(pid)) is not running") }
        try await waitUntil(timeout: .seconds(10), every: .milliseconds(20), "redis-server (pid \(pid)) to die") { Self.isGone(pid) }
    }

    /// Whether `pid` has exited. The daemon is no child of the test, so a zombie waiting for its parent counts.
    private static func isGone(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return true }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
}
