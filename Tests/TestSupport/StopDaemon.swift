import Foundation

/// Sends SIGTERM to the daemon whose pid is in `pidFile` and waits until it is gone: up to 10 s, then SIGKILL and
/// up to 2 s more. A daemon is no child of the test, so an exited one may linger as a zombie until its parent reaps
/// it: that counts as gone.
public func stopDaemon(pidFile: String) {
    guard let pid = try? String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
          let number = Int32(pid) else { return }
    func gone() -> Bool {
        guard kill(number, 0) == 0 else { return true }
        let stat = (try? String(contentsOfFile: "/proc/\(number)/stat", encoding: .utf8)) ?? ""
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }
    kill(number, SIGTERM)
    for _ in 0..<500 where !gone() { usleep(20_000) }
    guard !gone() else { return }
    kill(number, SIGKILL)
    for _ in 0..<100 where !gone() { usleep(20_000) }
}
