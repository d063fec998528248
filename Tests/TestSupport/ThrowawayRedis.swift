import Foundation

/// A redis-server of a test's own, for tests that restart or flush the server.
public final class ThrowawayRedis: @unchecked Sendable {
    public let port: Int
    public let directory: String
    public var url: String { "redis://127.0.0.1:\(port)/0" }

    public init() throws {
        port = freeLoopbackPort()
        directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("redis"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    /// Starts the server (AOF on, so a restart keeps the data).
    public func start() throws {
        try runCommand(TestEnvironment.redisServer, [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--daemonize", "yes",
            "--pidfile", "\(directory)/redis.pid", "--logfile", "\(directory)/redis.log",
            "--appendonly", "yes", "--appendfsync", "always", "--save", "",
        ])
        try waitForPort(port)
    }

    /// Stops the server, waiting until its port is closed.
    public func stop() {
        if let pid = try? String(contentsOfFile: "\(directory)/redis.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           let number = Int32(pid) {
            kill(number, SIGTERM)
            for _ in 0..<200 where kill(number, 0) == 0 { usleep(20_000) }
        }
    }

    public func restart() throws {
        stop()
        try start()
    }

    deinit { stop() }
}

/// Waits until something accepts TCP connections on the loopback `port`.
func waitForPort(_ port: Int, timeout: TimeInterval = 15) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        close(fd)
        if connected == 0 { return }
        usleep(20_000)
    }
    throw WaitTimedOut(what: "port \(port) to accept connections", timeout: .seconds(Int64(timeout)))
}
