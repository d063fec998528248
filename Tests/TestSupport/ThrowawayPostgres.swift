import Foundation

/// A PostgreSQL server of a test's own, for tests that restart it.
public final class ThrowawayPostgres: @unchecked Sendable {
    public let port: Int
    public let dataDirectory: String
    public var url: String { "postgres://countdown@127.0.0.1:\(port)/postgres" }

    public init() throws {
        port = freeLoopbackPort()
        let root = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("pg"))
        dataDirectory = root + "/data"
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        try asServerUser("/bin/chown", ["-R", TestEnvironment.postgresUser, root], asRoot: true)
        try asServerUser("/bin/chmod", ["700", dataDirectory])
        try asServerUser("\(TestEnvironment.postgresBin)/initdb", [
            "-D", dataDirectory, "-U", "countdown", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
        ])
        try start()
    }

    public func start() throws {
        try asServerUser("\(TestEnvironment.postgresBin)/pg_ctl", [
            "-D", dataDirectory, "-l", "\(dataDirectory)/server.log", "-w", "-t", "60",
            "-o", "-p \(port) -k \(dataDirectory) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
        ])
    }

    public func stop() {
        _ = try? asServerUser("\(TestEnvironment.postgresBin)/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
    }

    public func restart() throws {
        stop()
        try start()
    }

    deinit { stop() }

    @discardableResult
    private func asServerUser(_ executable: String, _ arguments: [String], asRoot: Bool = false) throws -> String {
        if geteuid() == 0 && !asRoot && TestEnvironment.postgresUser != "root" {
            return try runCommand("/usr/sbin/runuser", ["-u", TestEnvironment.postgresUser, "--", executable] + arguments)
        }
        if asRoot && geteuid() != 0 { return "" }
        return try runCommand(executable, arguments)
    }
}
