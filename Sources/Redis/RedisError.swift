/// Every failure of the Redis client: a code to branch on plus the context it happened in.
public struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The `redis://` URL could not be understood.
        case invalidURL
        /// A TLS or Sentinel setting is invalid; `context` names the variable.
        case invalidSetting
        /// The TCP connection could not be opened (refused, unreachable, connect timeout).
        case connectionFailed
        /// The server rejected the credentials.
        case authenticationFailed
        /// Reading or writing the socket failed (the server went away, reset).
        case io
        /// The server did not answer within the command timeout.
        case timeout
        /// The server sent something that is not valid RESP.
        case `protocol`
        /// The server answered the command with an error reply.
        case server
        /// The server is a replica now (`READONLY`, after a failover); the connection was dropped so the next use
        /// finds the primary.
        case readOnly
        /// `EVALSHA` of a script the server does not know (after `SCRIPT FLUSH` or a restart).
        case noScript
        /// The connection or client was closed.
        case closed
        /// A reply had a different shape than the caller expected.
        case unexpectedReply
    }

    public let code: Code
    /// What went wrong, e.g. the server's error message or hiredis's error string.
    public let message: String
    /// What was being done, e.g. `GET`, `connect 127.0.0.1:6379`.
    public let context: String
    /// The setting to correct when the failure says the configuration is wrong rather than Redis being away: a
    /// certificate not trusted (`REDIS_TLS_CA_FILE`, `REDIS_TLS_SERVER_NAME`), a client certificate missing or
    /// unusable, a master name the Sentinels do not know, credentials refused. `nil` for failures that may pass
    /// (refused connections, timeouts, a failover in progress).
    public let misconfigured: String?

    public init(_ code: Code, _ message: String, context: String = "", misconfigured: String? = nil) {
        self.code = code
        self.message = message
        self.context = context
        self.misconfigured = misconfigured ?? (code == .authenticationFailed ? "REDIS_URL" : nil)
    }

    public var description: String {
        context.isEmpty ? "redis \(code.rawValue): \(message)" : "redis \(code.rawValue) (\(context)): \(message)"
    }

    /// Whether the connection that raised it can no longer be used.
    public var breaksConnection: Bool {
        switch code {
        case .io, .timeout, .protocol, .closed, .connectionFailed, .readOnly: true
        case .invalidURL, .invalidSetting, .authenticationFailed, .server, .noScript, .unexpectedReply: false
        }
    }
}
