import BlockingIO
import HTTPTypes
/// Limits and protocol choices of one `HTTPClient`.
public struct HTTPClientConfiguration: Sendable {
    public enum HTTPVersion: Sendable {
        /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 with keep-alive for plain `http://`.
        case automatic
        /// HTTP/1.1 only.
        case http1
        // No HTTP/2 without TLS (h2c prior knowledge): libcurl before 8.0 (Debian 12 has 7.88.1) fails the second
        // request on such a connection with "Error in the HTTP2 framing layer" (curl issue 10634). HTTP/2 over TLS,
        // the push services' protocol, reuses and multiplexes its connections correctly.
    }

    /// Names the client's thread.
    public var name: String
    public var connectTimeout: Duration
    /// The default whole-transfer timeout of a request.
    public var requestTimeout: Duration
    /// The most connections open at once (all hosts); more requests wait for a free one or multiplex over HTTP/2.
    public var maxConnections: Int
    /// The most connections open at once to one host.
    public var maxConnectionsPerHost: Int
    public var httpVersion: HTTPVersion
    /// A response body larger than this fails with `.responseTooLarge`.
    public var maxResponseBytes: Int
    /// PEM bundle of trusted CAs; the system store when nil.
    public var caFile: String?
    /// The forward proxy; by default the one libcurl would read from the environment (`HTTPS_PROXY`, `NO_PROXY`, …).
    public var proxy: ProxySettings
    /// While requests are in flight, the transfer thread polls its sockets at most once per window, so one wake-up
    /// handles every answer that arrived within it: fewer context switches under load. Each step of a request that
    /// waits for its socket (connecting, a TLS flight, its answer) may wait up to one window more; a new request,
    /// a cancellation and shutdown are not held back. Zero polls again as soon as a socket is ready; values above
    /// `maxCoalescingWindow` count as that, and a pause is rounded up to whole milliseconds.
    public var coalescingWindow: Duration

    /// The longest coalescing window used.
    public static let maxCoalescingWindow: Duration = .milliseconds(100)

    public init(
        name: String = "http-client", connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(30),
        maxConnections: Int = 64, maxConnectionsPerHost: Int? = nil, httpVersion: HTTPVersion = .automatic,
        maxResponseBytes: Int = 4 << 20, caFile: String? = nil, coalescingWindow: Duration = .milliseconds(1),
        proxy: ProxySettings = .processEnvironment
    ) {
        self.name = name
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerHost = maxConnectionsPerHost ?? maxConnections
        self.httpVersion = httpVersion
        self.maxResponseBytes = maxResponseBytes
        self.caFile = caFile
        self.proxy = proxy
        self.coalescingWindow = max(.zero, coalescingWindow)
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 (libcurl reads 0 as "no timeout").
    var curlMilliseconds: Int {
        max(1, Int(wholeMilliseconds))
    }
}
