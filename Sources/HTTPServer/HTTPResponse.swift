import Foundation
import HTTPTypes

/// What a handler answers.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data
    /// When true the server closes the connection without sending anything (for fault injection).
    public var dropsConnection: Bool

    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
        self.dropsConnection = false
    }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Data(text.utf8))
    }

    /// A response without a body.
    public static func empty(status: Int = 204) -> HTTPResponse { HTTPResponse(status: status) }

    /// Closes the connection without answering.
    public static var dropConnection: HTTPResponse {
        var response = HTTPResponse(status: 0)
        response.dropsConnection = true
        return response
    }

    /// `404 Not Found` with a short text body.
    public static var notFound: HTTPResponse { .text("not found\n", status: 404) }

    /// `405 Method Not Allowed` naming the allowed methods.
    public static func methodNotAllowed(allowed: [String]) -> HTTPResponse {
        var response = HTTPResponse.text("method not allowed\n", status: 405)
        response.headers["Allow"] = allowed.joined(separator: ", ")
        return response
    }
}
