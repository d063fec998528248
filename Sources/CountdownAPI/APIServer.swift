import HTTPServer
import Telemetry

/// The HTTP server settings of the API: small bodies and headers, a deadline for receiving each request,
/// bounded connections (in all and per address) and memory per connection, so slow or huge requests cannot
/// tie it up. Every answer the server gives on its own (413, 431, 503) is the API's JSON error body.
public enum APIServer {
    /// Bodies up to this size are read (and answered `413` as JSON by the API past `JSONBody.maxBytes`); larger
    /// declared bodies are refused by the server before they are read.
    public static let serverBodyLimit = 64 * 1024
    /// Header blocks over this are answered `431` (JSON); a bearer token over 8 KiB is refused (401) by the API.
    public static let headerLimit = 16 * 1024
    /// libmicrohttpd's memory per connection (headers and buffers). Header blocks that do not even fit here
    /// get the library's own HTML 431: it is 4 × `headerLimit`, so only requests far past every limit see it.
    public static let connectionMemoryLimit = 64 * 1024

    /// A server on `address` answering every request with `service`; an idle connection is closed after 15 s
    /// without progress.
    /// - Parameters:
    ///   - threads: event-loop threads of the server (handlers run as tasks, so a few suffice).
    ///   - requestReadTimeout: a request's headers and body must have arrived within this long, however
    ///     steadily they trickle.
    ///   - connectionLimit: connections in all (see `DescriptorBudget`); past `overloadThreshold` requests are
    ///     answered `503` with `Retry-After` at once.
    ///   - metrics: counts connections closed at the read deadline.
    public static func make(
        _ service: APIService, address: String, threads: Int, requestReadTimeout: Duration, connectionLimit: Int, overloadThreshold: Int,
        perIPConnectionLimit: Int, metrics: APIMetrics
    ) -> HTTPServer {
        var configuration = HTTPServerConfiguration(
            address: address, threads: threads, maxBodyBytes: serverBodyLimit, connectionTimeout: .seconds(15),
            connectionLimit: connectionLimit, perIPConnectionLimit: perIPConnectionLimit, listenBacklog: 1024)
        configuration.overloadThreshold = overloadThreshold
        configuration.requestDeadline = requestReadTimeout
        configuration.requestDeadlineExceeded = { metrics.slowRequestsClosed.increment() }
        configuration.connectionMemoryLimit = connectionMemoryLimit
        configuration.maxHeaderBytes = headerLimit
        configuration.errorResponse = errorResponse
        return HTTPServer(configuration: configuration, asyncHandler: { [service] request in await service.respond(to: request) })
    }

    /// The metrics listener (`API_METRICS_ADDR`): `GET /metrics` only, JSON 404 for anything else.
    public static func makeMetrics(_ service: APIService, address: String) -> HTTPServer {
        var configuration = HTTPServerConfiguration(
            address: address, threads: 1, maxBodyBytes: 0, connectionTimeout: .seconds(15), connectionLimit: 64, perIPConnectionLimit: 16)
        configuration.requestDeadline = .seconds(10)
        configuration.errorResponse = errorResponse
        return HTTPServer(configuration: configuration) { [service] request in
            guard request.path == "/metrics" else { return APIError(.notFound, "only /metrics is served here").response }
            guard request.method == "GET" || request.method == "HEAD" else {
                return APIError(.methodNotAllowed, "/metrics answers GET only").response
            }
            return service.metricsResponse()
        }
    }

    /// The server's own answers (400 for ambiguous framing, 413, 431, 503) as API errors.
    @Sendable static func errorResponse(status: Int, message: String) -> HTTPResponse {
        let code: APIError.Code = switch status {
        case 400: .badRequest
        case 413: .payloadTooLarge
        case 431: .headersTooLarge
        case 503: .unavailable
        default: .internalError
        }
        return APIError(code, message).response
    }
}
