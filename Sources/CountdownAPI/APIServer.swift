import HTTPServer

/// The HTTP server settings of the API: small bodies, short timeouts and bounded connections, so slow or
/// huge requests cannot tie it up.
public enum APIServer {
    /// Bodies up to this size are read (and answered `413` as JSON by the API past `JSONBody.maxBytes`); larger
    /// declared bodies are refused by the server before they are read.
    public static let serverBodyLimit = 64 * 1024

    /// The configuration for `address`.
    /// - Parameters:
    ///   - threads: event-loop threads of the server (handlers run as tasks, so a few suffice).
    ///   - connectionTimeout: an idle or trickling connection is closed after this long without progress.
    public static func configuration(
        address: String, threads: Int = 4, connectionTimeout: Duration = .seconds(15), connectionLimit: Int = 4096,
        perIPConnectionLimit: Int? = nil
    ) -> HTTPServerConfiguration {
        HTTPServerConfiguration(
            address: address, threads: threads, maxBodyBytes: serverBodyLimit, connectionTimeout: connectionTimeout,
            connectionLimit: connectionLimit, perIPConnectionLimit: perIPConnectionLimit, listenBacklog: 1024)
    }

    /// A server answering every request with `service`.
    public static func make(_ service: APIService, configuration: HTTPServerConfiguration) -> HTTPServer {
        HTTPServer(configuration: configuration, asyncHandler: { [service] request in await service.respond(to: request) })
    }
}
