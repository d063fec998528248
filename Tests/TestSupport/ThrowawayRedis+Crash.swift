import Foundation

extension ThrowawayRedis {
    /// SIGKILL to the server (a crash: no final AOF write, so `appendfsync` decides what survives), waiting until it
    /// is gone; `start()` brings it back from its AOF. Off the cooperative threads.
    public func crash() async throws {
        guard let pid else { throw HarnessError("redis-server on :\(port) is not running (no pid file)") }
        _ = try await offThePool { crashProcess(pid) }
        waitForPortClosed(port)
    }
}
