import HTTPTypes

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    public let status: Int
    public let headers: HTTPHeaders
    public let body: [UInt8]
    /// The protocol the answer came over: `1.1`, `2`, ...
    public let httpVersion: String

    public init(status: Int, headers: HTTPHeaders, body: [UInt8], httpVersion: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// The body decoded as UTF-8 (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
