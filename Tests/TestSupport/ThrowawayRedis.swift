import Foundation

/// A redis-server of a test's own, for tests that restart or flush the server.
public final class ThrowawayRedis: @unchecked Sendable {
    public let port: Int
    public let directory: String
    public var url: String { "redis://127.0.0.1:\(port)/0" }
    /// Extra `redis-server` arguments (e.g. `["--requirepass", "secret"]`), appended last so they win.
    public let extraArguments: [String]

    /// Whether the port speaks TLS only (see `startTLS`).
    public let usesTLS: Bool

    /// - Parameter tlsArguments: when not empty, the port speaks TLS only, configured by these arguments.
    public init(extraArguments: [String] = [], tlsArguments: [String] = []) throws {
        port = freeLoopbackPort()
        usesTLS = !tlsArguments.isEmpty
        self.extraArguments = usesTLS ? ["--port", "0", "--tls-port", "\(port)"] + tlsArguments + extraArguments : extraArguments
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
        ] + extraArguments)
        try waitForPort(port)
    }

    /// Stops the server, waiting until its port is closed.
    public func stop() {
        stopDaemon(pidFile: "\(directory)/redis.pid")
        waitForPortClosed(port)
    }

    public func restart() throws {
        stop()
        try start()
    }

    deinit { stop() }
}

/// Waits until something accepts TCP connections on the loopback `port`.
public func waitForPort(_ port: Int, timeout: TimeInterval = 15) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if acceptsConnections(port) { return }
        usleep(20_000)
    }
    throw WaitTimedOut(what: "port \(port) to accept connections", timeout: .seconds(Int64(timeout)))
}

/// Waits (up to `timeout`) until nothing accepts TCP connections on the loopback `port`.
public func waitForPortClosed(_ port: Int, timeout: TimeInterval = 5) {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline && acceptsConnections(port) { usleep(20_000) }
}

private func acceptsConnections(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

extension ThrowawayRedis {
    /// Starts a server from async code without holding one of Swift's few cooperative threads while it boots
    /// (other tests' timing depends on those threads).
    public static func start(extraArguments: [String] = [], tlsArguments: [String] = []) async throws -> ThrowawayRedis {
        try await offCooperativePool { try ThrowawayRedis(extraArguments: extraArguments, tlsArguments: tlsArguments) }
    }

    /// `restart()` off the cooperative threads.
    public func restartInBackground() async throws { try await offCooperativePool { try self.restart() } }

    /// `stop()` off the cooperative threads.
    public func stopInBackground() async { _ = try? await offCooperativePool { self.stop() } }

    /// `start()` off the cooperative threads.
    public func startInBackground() async throws { try await offCooperativePool { try self.start() } }
}

private func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
