import Foundation
import HTTPClient
import TestSupport

/// The stub server (a python3 child process) on a free loopback port; stopped when released.
final class StubServer: @unchecked Sendable {
    let port: Int
    private let process: SpawnedProcess
    private let client: HTTPClient

    var baseURL: String { "http://127.0.0.1:\(port)" }

    struct State: Decodable {
        struct Recent: Decodable {
            let body: String
            let headers: [String: String]
            let path: String
        }
        let token_requests: Int
        let assertions: [String]
        let sends: Int
        let connections: Int
        let recent: [Recent]
    }

    /// Starts a server; `latencyMilliseconds` delays every messages:send answer.
    static func start(latencyMilliseconds: Int = 0) async throws -> StubServer {
        // Starting python blocks on its first line of output: do that off the cooperative pool.
        let server = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try StubServer() }) }
        }
        if latencyMilliseconds > 0 { try await server.configure(["latency_ms": latencyMilliseconds]) }
        return server
    }

    private init() throws {
        let script = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("stub") + ".py")
        try StubServerScript.source.write(toFile: script, atomically: true, encoding: .utf8)
        // The server exits by itself when this test process is gone (it watches its parent), even after a crash.
        process = try SpawnedProcess("/usr/bin/env", ["python3", script], stdout: .file(script + ".out"), stderr: .file(script + ".err"))
        let (line, _) = readFirstLine(of: process, stdoutPath: script + ".out")
        guard let port = Int(line) else {
            process.stop(grace: .zero)
            throw StubServerFailed(output: line)
        }
        self.port = port
        client = try HTTPClient(configuration: HTTPClientConfiguration(name: "stub-control", maxConnections: 2))
    }

    func state() async throws -> State {
        let response = try await client.send(HTTPRequest(url: baseURL + "/control/state"))
        return try JSONDecoder().decode(State.self, from: Data(response.body))
    }

    /// Changes `latency_ms`, `token_lifetime`, `token_status`, `token_delay_ms`.
    func configure(_ settings: [String: Int]) async throws {
        let body = try JSONSerialization.data(withJSONObject: settings)
        _ = try await client.send(HTTPRequest(method: .post, url: baseURL + "/control/config", body: Array(body)))
    }

    /// Makes every access token issued so far invalid (the next send gets 401).
    func revokeTokens() async throws {
        _ = try await client.send(HTTPRequest(method: .post, url: baseURL + "/control/revoke"))
    }

    deinit {
        client.shutdown()
        process.stop(grace: .zero)
    }
}

struct StubServerFailed: Error {
    let output: String
}
