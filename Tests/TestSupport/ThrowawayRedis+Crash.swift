import Foundation

extension ThrowawayRedis {
    /// SIGKILL to the server (a crash: no final AOF write, so `appendfsync` decides what survives), waiting until it
    /// is gone; `start()` brings it back from its AOF. Off the cooperative threads.
    public func crash() async throws {
        let pidFile = "\(directory)/redis.pid"
        _ = try await offThePool { crashDaemon(pidFile: pidFile) }
        waitForPortClosed(port)
    }
}
