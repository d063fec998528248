import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JWT
import TestSupport

/// The API and the console of one build in the rehearsal: started on the schema of the moment beside the workers,
/// checked for readiness and a real request, stopped with SIGTERM. A build without one of them (the first release
/// had no console) is reported, not failed: rolling back past its migration removes it (docs/upgrading.md).
extension UpgradeRehearsal {
    /// A running `countdown-api` or `countdown-console` of one build.
    struct Server {
        let program: String
        let process: SpawnedProcess
        let port: Int
        let healthPort: Int
        let logPath: String
    }

    static let apiSecret = "rehearsal-api-secret-of-at-least-32-bytes"
    static let consoleSecret = "rehearsal-console-secret-of-32-bytes-or-more"

    /// Starts `program` of `build` on free loopback ports; nil when the build has no such executable.
    func startServer(_ program: String, build: URL, label: String) throws -> Server? {
        let executable = build.appendingPathComponent(program).path
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        let port = freeLoopbackPort()
        let healthPort = freeLoopbackPort()
        var environment = system.workerEnvironment
        switch program {
        case "countdown-api":
            environment.merge(["API_ADDR": "127.0.0.1:\(port)", "API_METRICS_ADDR": "127.0.0.1:\(healthPort)",
                               "API_JWT_SECRET": Self.apiSecret]) { $1 }
        default:
            environment.merge(["CONSOLE_ADDR": "127.0.0.1:\(port)", "CONSOLE_METRICS_ADDR": "127.0.0.1:\(healthPort)",
                               "CONSOLE_AUTH": "jwt", "CONSOLE_JWT_SECRET": Self.consoleSecret,
                               "CONSOLE_OPERATOR_GROUPS": "countdown-operators"]) { $1 }
        }
        let logPath = (system.directory as NSString).appendingPathComponent("\(program)-\(label).log")
        let process = try SpawnedProcess(executable, environment: environment, stdout: .file(logPath), stderr: .file(logPath))
        return Server(program: program, process: process, port: port, healthPort: healthPort, logPath: logPath)
    }

    /// The server's answer to GET `path` on its main port: status and body (0 when it cannot be reached).
    func get(_ server: Server, _ path: String, token: String? = nil) async -> (status: Int, body: String) {
        guard let url = URL(string: "http://127.0.0.1:\(server.port)\(path)") else { return (0, "bad path") }
        var request = URLRequest(url: url)
        request.timeoutInterval = 5
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        } catch {
            return (0, "\(error)")
        }
    }

    /// Waits up to 30 s for the API's `/readyz` or the console's fleet page (an operator's token) to answer 200 and
    /// records the check.
    func checkServing(_ server: Server, _ what: String) async {
        let path = server.program == "countdown-api" ? "/readyz" : "/"
        let token = server.program == "countdown-api" ? nil : try? Self.operatorToken()
        var last: (status: Int, body: String) = (0, "")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, server.process.isRunning {
            last = await get(server, path, token: token)
            if last.status == 200 { break }
            try? await Task.sleep(for: .milliseconds(200))
        }
        check(last.status == 200, "\(what): \(server.program) GET \(path) \(last.status)"
              + (last.status == 200 ? "" : " \(last.body.prefix(160)) (log \(server.logPath))"))
    }

    private struct OperatorClaims: Encodable {
        let sub: String
        let groups: [String]
        let iat: Int
        let exp: Int
    }

    /// An operator's HS256 token for the console (CONSOLE_JWT_SECRET).
    static func operatorToken() throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        return try JWTSigner.hs256(secret: Array(consoleSecret.utf8))
            .sign(OperatorClaims(sub: "rehearsal-operator", groups: ["countdown-operators"], iat: now, exp: now + 600))
    }

    /// The API and the console of `build`, each checked serving; a missing executable is noted.
    func startServers(of build: URL, label: String, _ what: String) async throws -> [Server] {
        var servers: [Server] = []
        for program in ["countdown-api", "countdown-console"] {
            guard let server = try startServer(program, build: build, label: label) else {
                note("\(label) build has no \(program): rolling back to it removes it (docs/upgrading.md)")
                continue
            }
            await checkServing(server, what)
            servers.append(server)
        }
        return servers
    }

    /// SIGTERM, then the exit code within 20 s, recorded.
    func stopServer(_ server: Server, _ what: String) async {
        server.process.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(20)
        while server.process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        if server.process.isRunning { server.process.signal(SIGKILL) }
        check(server.process.exitStatus == 0, "\(what): \(server.program) stopped with exit code 0 (\(server.process.exitStatus.map(String.init) ?? "killed"))")
    }
}
