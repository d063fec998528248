import HTTPServer

/// The console's HTTP listeners: the pages (small form bodies, bounded connections) and `/metrics`.
public enum ConsoleServer {
    /// A server answering every request with `service`.
    public static func make(_ service: ConsoleService, address: String) -> HTTPServer {
        var configuration = HTTPServerConfiguration(
            address: address, threads: 2, maxBodyBytes: 16 * 1024, connectionTimeout: .seconds(30), connectionLimit: 256, perIPConnectionLimit: 64)
        configuration.requestDeadline = .seconds(15)
        configuration.connectionMemoryLimit = 64 * 1024
        configuration.maxHeaderBytes = 16 * 1024
        return HTTPServer(configuration: configuration, asyncHandler: { [service] request in await service.respond(to: request) })
    }

    /// `GET /metrics`, and `/healthz` (the process serves; no sign-in, nothing read) for probes and health checks.
    public static func makeMetrics(_ service: ConsoleService, address: String) -> HTTPServer {
        var configuration = HTTPServerConfiguration(
            address: address, threads: 1, maxBodyBytes: 0, connectionTimeout: .seconds(15), connectionLimit: 64, perIPConnectionLimit: 16)
        configuration.requestDeadline = .seconds(10)
        return HTTPServer(configuration: configuration) { [service] request in
            guard request.method == "GET" || request.method == "HEAD" else { return .methodNotAllowed(allowed: ["GET"]) }
            switch request.path {
            case "/metrics": return service.metricsResponse()
            case "/healthz": return .text("ok\n")
            default: return .notFound
            }
        }
    }
}
