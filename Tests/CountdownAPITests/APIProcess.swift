import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport

/// A `countdown-api` child process, stopped (SIGTERM) on `deinit`.
final class APIProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let stderrPath: String
    let port: Int
    /// The port of the metrics listener (`API_METRICS_ADDR`).
    let metricsPort: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts the API with `environment` (API_ADDR defaults to a free loopback port) and waits for its
    /// "listening" line; with `openFiles`, under that soft and hard `RLIMIT_NOFILE` (prlimit execs it). `program`: the
    /// built executable and the arguments before any other (`["countdown", "api"]`: the multi-call one).
    init(environment: [String: String], openFiles: (soft: Int, hard: Int)? = nil, program: [String] = ["countdown-api"]) throws {
        stderrPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("api") + ".log")
        guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else { throw StartFailed(output: "cannot create \(stderrPath)") }
        let environment = ["API_ADDR": "127.0.0.1:0", "API_METRICS_ADDR": "127.0.0.1:0", "PATH": "/usr/bin:/bin"].merging(environment) { _, new in new }
        let stdoutPath = stderrPath + ".stdout"
        let command = [TestEnvironment.productsDirectory.appendingPathComponent(program[0]).path] + program.dropFirst()
        let (executable, arguments) = openFiles.map { ("/usr/bin/prlimit", ["--nofile=\($0.soft):\($0.hard)"] + command) }
            ?? (command[0], Array(command.dropFirst()))
        process = try SpawnedProcess(executable, arguments, environment: environment, stdout: .file(stdoutPath), stderr: .file(stderrPath))
        let (object, line) = readAnnouncement(of: process, stdoutPath: stdoutPath)
        guard let announcement = object, announcement["event"] as? String == "listening", let port = announcement["port"] as? Int,
            let metricsPort = announcement["metricsPort"] as? Int
        else {
            throw StartFailed(output: line + ((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""))
        }
        self.port = port
        self.metricsPort = metricsPort
    }

    deinit { _ = stop() }

    /// Sends SIGTERM and returns the exit status (SIGKILL after 15 s).
    func stop() -> Int32 {
        process.stop(grace: .seconds(15))
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    static var executable: URL { TestEnvironment.productsDirectory.appendingPathComponent("countdown-api") }

    /// Runs the API to completion (for configuration errors) and returns its exit status and stderr.
    static func runToExit(environment: [String: String], arguments: [String] = []) throws -> (status: Int32, stderr: String) {
        let (status, output) = try runProcess(executable.path, arguments, environment: environment)
        return (status, output)
    }

    struct StartFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "countdown-api did not start: \(output)" }
    }

    /// One HTTP exchange with the running API.
    func fetch(
        _ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:], port: Int? = nil
    ) async throws -> (status: Int, body: Data, headers: [String: String]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port ?? self.port)" + path)!)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return (http?.statusCode ?? 0, data, headers)
    }
}
