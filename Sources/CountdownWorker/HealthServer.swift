import Foundation
import HTTPServer
import Lifecycle
import Telemetry

/// `/healthz` (the process is alive), `/readyz` (its dependencies answer) and `/metrics` (Prometheus text).
public final class HealthServer: Service {
    public let name = "health-server"
    private let address: String
    private let metrics: MetricsRegistry
    private let readiness: @Sendable () async -> [String: String]
    private let logger: Logger

    /// - Parameter readiness: returns the problems (dependency → error); empty means ready.
    public init(address: String, metrics: MetricsRegistry, logger: Logger, readiness: @escaping @Sendable () async -> [String: String]) {
        self.address = address
        self.metrics = metrics
        self.readiness = readiness
        self.logger = logger.with(["component": "http"])
    }

    public func run(shutdown: ShutdownSignal) async throws {
        let metrics = self.metrics
        let readiness = self.readiness
        let server = HTTPServer(configuration: HTTPServerConfiguration(address: address, threads: 2), asyncHandler: { request in
            switch (request.method, request.path) {
            case ("GET", "/healthz"):
                return .text("ok\n")
            case ("GET", "/readyz"):
                let problems = await readiness()
                if problems.isEmpty { return .text("ready\n") }
                return .json(Unready(problems: problems), status: 503)
            case ("GET", "/metrics"):
                return .text(metrics.render(), contentType: MetricsRegistry.contentType)
            default:
                return .notFound
            }
        })
        try server.start()
        logger.info("serving health and metrics", ["address": .string(server.boundAddress ?? address)])
        await shutdown.wait()
        await server.shutdown()
    }
}

/// `/readyz`'s answer while something is not ready: `{"problems":{dependency: error},"ready":false}`.
private struct Unready: Encodable {
    var ready = false
    var problems: [String: String]
}
