import Foundation
import HTTPTypes

/// One complete request, body included, as handed to a handler.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, ... as sent.
    public var method: String
    /// The decoded path without the query, e.g. `/v1/projects/p/messages:send`.
    public var path: String
    /// Decoded query items in order; a key without `=` has a nil value.
    public var query: [(name: String, value: String?)]
    public var headers: HTTPHeaders
    public var body: Data
    /// The peer as `ip:port` (`[ip]:port` for IPv6), or empty when unknown.
    public var remoteAddress: String

    public init(
        method: String, path: String, query: [(name: String, value: String?)] = [], headers: HTTPHeaders = [:],
        body: Data = Data(), remoteAddress: String = ""
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The first value of query item `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value ?? nil
    }

    /// The body decoded as `application/x-www-form-urlencoded` pairs (`+` is a space).
    public func formFields() -> [(name: String, value: String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
