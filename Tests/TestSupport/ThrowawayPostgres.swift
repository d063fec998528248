import Foundation

/// A PostgreSQL server of a test's own, for tests that restart it.
public final class ThrowawayPostgres: @unchecked Sendable {
    public let port: Int
    public let dataDirectory: String
    public var url: String { "postgres://countdown@127.0.0.1:\(port)/postgres" }

    /// Extra `-c` settings for the server (TLS).
    private let serverOptions: String
    /// `-c name=value` options from the initializer's `settings`.
    private let serverSettings: String

    /// - Parameters:
    ///   - certificates: when set, the server runs with `ssl=on` and `certificates`' server certificate.
    ///   - settings: server settings passed as `-c name=value` (e.g. `max_connections`).
    public init(certificates: TestCertificates? = nil, settings: [String: String] = [:]) throws {
        port = freeLoopbackPort()
        let root = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("pg"))
        dataDirectory = root + "/data"
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        if let certificates {
            // The server reads its key only when it owns it with mode 0600: copies in its own tree.
            try FileManager.default.copyItem(atPath: certificates.serverCertificateFile, toPath: root + "/server.crt")
            try FileManager.default.copyItem(atPath: certificates.serverKeyFile, toPath: root + "/server.key")
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: root + "/server.key")
            serverOptions = " -c ssl=on -c ssl_cert_file=\(root)/server.crt -c ssl_key_file=\(root)/server.key"
        } else {
            serverOptions = ""
        }
        serverSettings = settings.sorted { $0.key < $1.key }.map { " -c \($0.key)=\($0.value)" }.joined()
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
            "-o", "-p \(port) -k \(dataDirectory) -c listen_addresses=127.0.0.1 -c fsync=off" + serverOptions + serverSettings, "start",
        ])
    }

    public func stop() {
        _ = try? asServerUser("\(TestEnvironment.postgresBin)/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
    }

    /// `pg_ctl stop -m immediate`: a crash (no checkpoint; the next start recovers from the WAL).
    public func stopImmediately() {
        _ = try? asServerUser("\(TestEnvironment.postgresBin)/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
    }

    public func restart() throws {
        stop()
        try start()
    }

    deinit { stop() }

    @discardableResult
    private func asServerUser(_ executable: String, _ arguments: [String], asRoot: Bool = false) throws -> String {
        if geteuid() == 0 && !asRoot && TestEnvironment.postgresUser != "root" {
            return try runWithoutInheritedDescriptors("/usr/sbin/runuser", ["-u", TestEnvironment.postgresUser, "--", executable] + arguments)
        }
        if asRoot && geteuid() != 0 { return "" }
        return try runWithoutInheritedDescriptors(executable, arguments)
    }

    /// Runs a command with only stdin/stdout/stderr open and waits for it: `pg_ctl start` hands what it
    /// inherited on to the server it daemonizes, so nothing of this process may leak into it.
    private func runWithoutInheritedDescriptors(_ executable: String, _ arguments: [String]) throws -> String {
        let outputPath = (dataDirectory as NSString).deletingLastPathComponent + "/command.out"
        try? FileManager.default.removeItem(atPath: outputPath)
        let command = ([executable] + arguments).joined(separator: " ")
        let status = try SpawnedProcess(executable, arguments, stdout: .file(outputPath), stderr: .file(outputPath)).waitBlocking(deadline: nil) ?? -1
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard status == 0 else { throw CommandFailed(command: command, status: status, output: output) }
        return output
    }
}
