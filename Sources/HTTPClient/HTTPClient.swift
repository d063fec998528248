import Synchronization

/// Sends HTTP requests; the seam push transports depend on (a fake stands in for it in tests).
public protocol HTTPRequestSending: Sendable {
    /// The response, whatever its status; throws `HTTPClientError` when there is none.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// An asynchronous HTTP client over libcurl: one multi handle on a thread the client owns runs every request
/// concurrently, reusing kept-alive connections and multiplexing over HTTP/2 where the server offers it.
///
/// Create one per process (or per remote service) and share it; `shutdown()` (or releasing it) fails whatever is
/// still in flight with `.shutdown`.
public final class HTTPClient: HTTPRequestSending {
    public let configuration: HTTPClientConfiguration
    private let engine: TransferEngine

    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) throws {
        self.configuration = configuration
        engine = try TransferEngine(configuration: configuration)
    }

    deinit { engine.stop() }

    /// Sends `request` and returns the complete response. Cancelling the calling task aborts the transfer.
    /// - Throws: `HTTPClientError` when no response arrived (refused, timeout, TLS, broken connection, ...).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = Transfer(request: request, maxResponseBytes: configuration.maxResponseBytes)
        let engine = self.engine
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                engine.submit(transfer)
            }
        } onCancel: {
            engine.cancel(transfer)
        }
    }

    /// Requests currently submitted and not yet answered.
    public var inFlight: Int { engine.inFlight.load(ordering: .relaxed) }

    /// Connections opened so far (a steady value under load means connections are reused).
    public var connectionsOpened: Int { engine.connectionsOpened.load(ordering: .relaxed) }

    /// Stops the transfer thread; requests in flight and later ones fail with `.shutdown`.
    public func shutdown() { engine.stop() }
}
