import Foundation

extension ThrowawayRedis {
    /// The server's pid (its pidfile); nil when it is not running.
    public var pid: Int32? {
        (try? String(contentsOfFile: "\(directory)/redis.pid", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// CPU seconds of the server; 0 when it is not running.
    public func cpuSeconds() -> Double { pid.flatMap { ProcessUsage.cpuSeconds(pid: $0) } ?? 0 }
}
