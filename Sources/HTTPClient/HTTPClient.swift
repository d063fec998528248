import BlockingIO
import Synchronization

/// Sends HTTP requests; the seam push transports depend on (a fake stands in for it in tests).
public protocol HTTPRequestSending: Sendable {
    /// Sends every request concurrently and returns their outcomes in order, once all are in (a failure is an
    /// `HTTPClientError`: no response arrived). `onAnswer` is called once for each request, with its index and outcome, as
    /// that outcome arrives, before the last one is in (so a caller can free what each held).
    func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>]
}

/// Told once for each request of a batch (its index in the batch and its outcome) as its outcome arrives, possibly on
/// the client's own thread: keep it quick.
public typealias AnswerHook = @Sendable (_ index: Int, _ outcome: Result<HTTPResponse, HTTPClientError>) -> Void

extension HTTPRequestSending {
    public func sendAll(_ requests: [HTTPRequest]) async -> [Result<HTTPResponse, HTTPClientError>] {
        await sendAll(requests, onAnswer: nil)
    }

    /// Sends `request` as a batch of one and returns the response, whatever its status.
    /// - Throws: `HTTPClientError` when no response arrived (refused, timeout, TLS, broken connection, ...).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await sendAll([request], onAnswer: nil)[0].get()
    }
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

    /// Sends every request concurrently and returns their outcomes in order (one request is a batch of one). The
    /// calling task is resumed once, when the last answer is in (a batch costs one wake-up, not one per request).
    /// Cancelling the calling task aborts the transfers still in flight. `onAnswer` is called on the client's thread as each outcome arrives.
    public func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>] {
        if requests.isEmpty { return [] }
        let batch = TransferBatch(count: requests.count)
        let limit = configuration.maxResponseBytes
        let transfers = requests.enumerated().map { index, request in
            Transfer(request: request, maxResponseBytes: limit, batch: batch, index: index, onAnswer: onAnswer)
        }
        let engine = self.engine
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                batch.wait(with: continuation)
                engine.submit(transfers)
            }
        } onCancel: {
            engine.cancel(transfers)
        }
    }

    /// Requests currently submitted and not yet answered.
    public var inFlight: Int { engine.inFlight.load(ordering: .relaxed) }

    /// Connections opened so far (a steady value under load means connections are reused).
    public var connectionsOpened: Int { engine.connectionsOpened.load(ordering: .relaxed) }

    /// How often the transfer thread has polled its sockets (each poll is at most one wake-up).
    public var polls: Int { engine.polls.load(ordering: .relaxed) }

    /// Stops the transfer thread; requests in flight and later ones fail with `.shutdown`.
    public func shutdown() { engine.stop() }
}
