import Foundation

/// Debian's `pgbouncer` in transaction mode in front of the shared test PostgreSQL, trusting every user.
public final class ThrowawayPgBouncer: @unchecked Sendable {
    public let port: Int
    public let directory: String

    public init(serverURL: String = TestEnvironment.databaseURL) throws {
        guard let server = URLComponents(string: serverURL), let host = server.host, let serverPort = server.port else {
            throw CommandFailed(command: "pgbouncer", status: -1, output: "cannot read host and port of \(serverURL)")
        }
        port = freeLoopbackPort()
        directory = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("pgbouncer"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let user = server.user ?? "countdown"
        try "\"\(user)\" \"\"\n".write(toFile: "\(directory)/users.txt", atomically: true, encoding: .utf8)
        try """
            [databases]
            * = host=\(host) port=\(serverPort)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory)/users.txt
            pool_mode = transaction
            max_client_conn = 400
            default_pool_size = 20
            ignore_startup_parameters = extra_float_digits,options
            pidfile = \(directory)/pgbouncer.pid
            logfile = \(directory)/pgbouncer.log
            """.write(toFile: "\(directory)/pgbouncer.ini", atomically: true, encoding: .utf8)
        try start()
    }

    /// Starts the pooler (again, after `stop()`) on the same port and configuration.
    public func start() throws {
        var arguments = ["-d", "\(directory)/pgbouncer.ini"]
        if geteuid() == 0 {
            // PgBouncer refuses to run as root: it switches to the PostgreSQL server's user.
            try runCommand("/bin/chown", ["-R", TestEnvironment.postgresUser, directory])
            arguments = ["-u", TestEnvironment.postgresUser] + arguments
        }
        try runCommand("/usr/sbin/pgbouncer", arguments, outputPath: "\(directory)/start.log")
        try waitForPort(port)
    }

    /// `url` (a database on the shared server) with the host and port of this pooler and `?prepared_statements=false`.
    public func url(through databaseURL: String) -> String {
        var components = URLComponents(string: databaseURL)!
        components.host = "127.0.0.1"
        components.port = port
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "prepared_statements", value: "false")]
        return components.string!
    }

    /// What the pooler logged (one line per client login, among others).
    public var log: String { (try? String(contentsOfFile: "\(directory)/pgbouncer.log", encoding: .utf8)) ?? "" }

    public func stop() { stopDaemon(pidFile: "\(directory)/pgbouncer.pid") }

    deinit { stop() }
}
