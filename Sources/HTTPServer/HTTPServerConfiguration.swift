/// How an `HTTPServer` listens and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// `host:port` to listen on (see `HTTPServerAddress`); port 0 picks a free one, read back with `boundPort`.
    public var address: String
    /// Threads of the server's own pool; each runs an event loop over its share of connections.
    public var threads: Int
    /// Largest accepted request body; a larger one is answered `413` without being read.
    public var maxBodyBytes: Int
    /// An idle or slow connection is closed after this long without progress (whole seconds, at least 1).
    public var connectionTimeout: Duration
    /// Most simultaneous connections in total (nil: the library default).
    public var connectionLimit: Int?
    /// Most simultaneous connections from one IP address (nil: unlimited).
    public var perIPConnectionLimit: Int?
    /// Pending connections the kernel queues before they are accepted.
    public var listenBacklog: Int
    /// A socket already bound and listening (inherited from the parent process, which picked and bound the port)
    /// to serve instead of binding `address`, which then only names it; the server takes it over. nil: bind `address`.
    public var listeningDescriptor: Int32?
    /// A connection must deliver each complete request (headers and body) within this long of being accepted
    /// or of its previous answer, however steadily it trickles; otherwise it is closed (nil: no deadline).
    public var requestDeadline: Duration?
    /// Called (on the server's watchdog thread) for each connection closed at `requestDeadline`.
    public var requestDeadlineExceeded: (@Sendable () -> Void)?
    /// Memory libmicrohttpd gives each connection for its headers and buffers (nil: the library's 32 KiB).
    /// A header block that does not fit is answered by the library itself (431, with an HTML body).
    public var connectionMemoryLimit: Int?
    /// Header blocks (names and values) larger than this are answered `431` by the server (nil: no limit
    /// besides `connectionMemoryLimit`). Keep it well below the memory limit so such requests get this answer.
    public var maxHeaderBytes: Int?
    /// Past this many open connections every new request is answered `503` (with the error response's
    /// `Retry-After`) and its connection closed, at once, so an overloaded server says so instead of leaving
    /// clients waiting (nil: no such threshold). Keep it below `connectionLimit`, past which connections are
    /// closed unanswered.
    public var overloadThreshold: Int?
    /// Strict framing (on unless turned off): libmicrohttpd's `MHD_OPTION_STRICT_FOR_CLIENT` (HTTP/1.1 without
    /// `Host`, spaces in the URL) and the server's own refusal of ambiguous bodies, so no proxy in front can read
    /// a request's length differently from this server (request smuggling): `Content-Length` together with
    /// `Transfer-Encoding`, and `Content-Length` repeated or not a plain number, are answered `400` and the
    /// connection closed.
    public var strictFraming = true
    /// Builds the answers the server gives on its own (400 for framing, 413, 431, 503 while stopping) from the status and a
    /// message; plain text unless set.
    public var errorResponse: @Sendable (_ status: Int, _ message: String) -> HTTPResponse = { status, message in
        .text(message + "\n", status: status)
    }

    public init(
        address: String, threads: Int = 4, maxBodyBytes: Int = 1 << 20, connectionTimeout: Duration = .seconds(30),
        connectionLimit: Int? = nil, perIPConnectionLimit: Int? = nil, listenBacklog: Int = 1024
    ) {
        self.address = address
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.connectionTimeout = connectionTimeout
        self.connectionLimit = connectionLimit
        self.perIPConnectionLimit = perIPConnectionLimit
        self.listenBacklog = listenBacklog
    }

    /// The connection timeout in whole seconds, rounded up.
    var connectionTimeoutSeconds: Int {
        let (seconds, attoseconds) = connectionTimeout.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }

    func validate() throws {
        func invalid(_ what: String, _ reason: String) -> HTTPServerError { HTTPServerError(.invalidConfiguration, what: what, reason: reason) }
        guard (1...256).contains(threads) else { throw invalid("threads", "must be 1...256, got \(threads)") }
        guard maxBodyBytes >= 0 else { throw invalid("maxBodyBytes", "must not be negative") }
        guard connectionTimeoutSeconds >= 1 else { throw invalid("connectionTimeout", "must be at least one second") }
        if let connectionLimit, connectionLimit < 1 { throw invalid("connectionLimit", "must be positive") }
        if let perIPConnectionLimit, perIPConnectionLimit < 1 { throw invalid("perIPConnectionLimit", "must be positive") }
        guard listenBacklog >= 1 else { throw invalid("listenBacklog", "must be positive") }
        if let requestDeadline, requestDeadline <= .zero { throw invalid("requestDeadline", "must be positive") }
        if let connectionMemoryLimit, connectionMemoryLimit < 4096 { throw invalid("connectionMemoryLimit", "must be at least 4096") }
        if let overloadThreshold, overloadThreshold < 1 { throw invalid("overloadThreshold", "must be positive") }
        if let maxHeaderBytes, maxHeaderBytes < 1 { throw invalid("maxHeaderBytes", "must be positive") }
    }
}
