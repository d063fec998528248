import HTTPTypes

/// One HTTP request for `HTTPClient.send`.
public struct HTTPRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE", head = "HEAD"
    }

    public var method: Method
    /// An absolute `http://` or `https://` URL.
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The whole-transfer deadline; the client's `requestTimeout` when nil.
    public var timeout: Duration?

    public init(method: Method = .get, url: String, headers: HTTPHeaders = [:], body: [UInt8] = [], timeout: Duration? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
