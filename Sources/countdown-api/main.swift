import CountdownAPI
import Configuration
import Foundation
import HTTPServer
import JWT
import Postgres
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

// countdown-api: the HTTP API of the integration guide (see docs/openapi.yaml). Configured by the environment:
// DATABASE_URL, API_ADDR, API_JWT_SECRET or API_JWT_PUBLIC_KEY_FILE, LOG_LEVEL, LOG_FORMAT, SHUTDOWN_GRACE_SECONDS,
// and the tuning knobs API_HTTP_THREADS (4) and API_DATABASE_CONNECTIONS (16).

BuildInfo.answerVersionFlag(program: "countdown-api")

func fail(_ lines: String, code: Int32) -> Never {
    for line in lines.split(separator: "\n") {
        FileHandle.standardError.write(Data("countdown-api: \(line)\n".utf8))
    }
    exit(code)
}

if CommandLine.arguments.count > 1 {
    let usage = "usage: countdown-api (configured by the environment; see docs/openapi.yaml and docs/deployment.md)"
    if ["-h", "--help"].contains(CommandLine.arguments[1]) {
        print(usage)
        exit(0)
    }
    fail("unexpected argument \"\(CommandLine.arguments[1])\"; \(usage)", code: 2)
}

let config: APIConfig
let database: PostgresClient
let verifier: JWTVerifier
do {
    config = try APIConfig.load()
    database = try PostgresClient(url: config.databaseURL, maxConnections: config.databaseConnections)
    verifier = try config.makeVerifier()
} catch let error as PostgresError {
    fail("DATABASE_URL: \(error.message ?? error.description)", code: 2)
} catch {
    fail("\(error)", code: 2)
}

// SIGINT / SIGTERM are taken by sigwait below; block them before any thread starts so every thread inherits it.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let logger = config.logger.with(["component": "countdown-api"])
let service = APIService(
    store: PostgresAPIStore(database: database), authenticator: Authenticator(verifier: verifier),
    metrics: APIMetrics(registry: MetricsRegistry()), logger: logger)
let server = APIServer.make(service, configuration: APIServer.configuration(address: config.address, threads: config.httpThreads))
do {
    try server.start()
} catch {
    fail("\(error)", code: 1)
}

let announcement: [String: Any] = ["event": "listening", "address": server.boundAddress ?? "", "port": server.boundPort ?? 0]
if let line = try? JSONSerialization.data(withJSONObject: announcement, options: [.sortedKeys, .withoutEscapingSlashes]) {
    FileHandle.standardOutput.write(line + Data("\n".utf8))
}
let algorithm = if case .hs256 = config.tokenKey { "HS256" } else { "RS256" }
logger.info("listening", ["address": .string(server.boundAddress ?? ""), "jwt": .string(algorithm), "version": .string(BuildInfo.version)])

var received: Int32 = 0
sigwait(&stopSignals, &received)
logger.info("stopping", ["signal": .int(Int(received)), "graceSeconds": .int(config.shutdownGraceSeconds)])
service.beginDraining()
let idle = await service.waitUntilIdle(timeout: .seconds(config.shutdownGraceSeconds))
await server.shutdown()
database.close()
logger.info("stopped", ["drained": .bool(idle)])
exit(0)
