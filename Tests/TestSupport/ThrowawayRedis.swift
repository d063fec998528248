import Foundation

/// A redis-server of a test's own, for tests that restart or flush the server.
public final class ThrowawayRedis: @unchecked Sendable {
    public let port: Int
    public let directory: String
    public var url: String { "redis://127.0.0.1:\(port)/0" }
    /// Extra `redis-server` arguments (e.g. `["--requirepass", "secret"]`), appended last so they win.
    public let extraArguments: [String]

    public init(extraArguments: [String] = []) throws {
        self.extraArguments = extraArguments
        port = freeLoopbackPort()
        directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("redis"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    /// Starts the server (AOF on, so a restart keeps the data).
    public func start() throws {
        try spawnAndWait(TestEnvironment.redisServer, [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--daemonize", "yes",
            "--pidfile", "\(directory)/redis.pid", "--logfile", "\(directory)/redis.log",
            "--appendonly", "yes", "--appendfsync", "always", "--save", "",
        ] + extraArguments)
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

    /// posix_spawn + waitpid with a clean signal mask. Foundation's `Process` can miss the exit of a short-lived child
    /// when other tests launch processes at the same time (the suite hung), and a child spawned from a thread that
    /// blocks signals inherits the mask, so the server would ignore SIGTERM forever.
    private func spawnAndWait(_ executable: String, _ arguments: [String]) throws {
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var terminating = sigset_t()
        sigemptyset(&terminating)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&terminating, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &terminating)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, nil, &attributes, argv, environ)
        guard spawned == 0 else { throw CommandFailed(command: executable, status: spawned, output: "posix_spawn failed") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw CommandFailed(command: ([executable] + arguments).joined(separator: " "), status: status, output: "") }
    }
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
