import Foundation

/// Why an `HTTPServer` could not be configured or started.
public struct HTTPServerError: Error, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The listen address could not be parsed (`host:port`, `[v6]:port`).
        case invalidAddress
        /// A configuration value is out of range (threads, body limit, timeout).
        case invalidConfiguration
        /// `socket()`, `bind()` or `listen()` failed, e.g. the port is taken.
        case bindFailed
        /// libmicrohttpd refused to start on the bound socket.
        case startFailed
        /// `start()` was called on a server that is running or already stopped.
        case notStartable
    }

    public let code: Code
    /// The address (or setting) concerned.
    public let what: String
    /// The system or library reason.
    public let reason: String

    public init(_ code: Code, what: String, reason: String) {
        self.code = code
        self.what = what
        self.reason = reason
    }

    public var description: String {
        switch code {
        case .invalidAddress: "invalid listen address \"\(what)\": \(reason)"
        case .invalidConfiguration: "invalid HTTP server setting \(what): \(reason)"
        case .bindFailed: "cannot listen on \(what): \(reason)"
        case .startFailed: "cannot start HTTP server on \(what): \(reason)"
        case .notStartable: "HTTP server on \(what) cannot start: \(reason)"
        }
    }

    /// An error from the current `errno`.
    static func system(_ code: Code, what: String, call: String) -> HTTPServerError {
        let number = errno
        return HTTPServerError(code, what: what, reason: "\(call): \(String(cString: strerror(number)))")
    }
}
