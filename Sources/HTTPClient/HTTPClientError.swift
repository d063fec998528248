/// Why a request got no HTTP response. An HTTP error status is not an error here: it is a response.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The request cannot be sent as given (bad URL, CR/LF in a header, ...).
        case invalidRequest
        case cannotResolveHost
        /// Nothing listens at the address (the request was never sent).
        case connectionRefused
        /// Connecting failed in another way (unreachable network, ...); the request was never sent.
        case connectFailed
        /// The connection was not established within the connect timeout; the request was never sent.
        case connectTimeout
        /// The whole transfer took longer than its timeout; the server may have acted on the request.
        case timeout
        /// The TLS handshake or certificate check failed.
        case tls
        /// The connection broke while sending or receiving, or the server answered with something that is not HTTP.
        case io
        case responseTooLarge
        case cancelled
        /// The client was shut down before the request finished.
        case shutdown
        /// libcurl failed in a way none of the above describes.
        case other
    }

    public let code: Code
    public let message: String
    public let url: String?
    /// The libcurl result code, when libcurl reported the failure.
    public let curlCode: Int32?

    public init(_ code: Code, _ message: String, url: String? = nil, curlCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.url = url
        self.curlCode = curlCode
    }

    /// Whether the server cannot have seen the request, so sending it again is always safe.
    public var requestWasNotSent: Bool {
        [.invalidRequest, .cannotResolveHost, .connectionRefused, .connectFailed, .connectTimeout].contains(code)
    }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let url { text += " (\(url))" }
        return text
    }
}
