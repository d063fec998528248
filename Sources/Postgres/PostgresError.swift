/// Everything that can go wrong talking to PostgreSQL: what kind of failure, what was being done, and what
/// the server said. Never carries a password.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The database URL is malformed or names something unsupported.
        case invalidURL
        /// No session could be opened (refused, unreachable, authentication failed, unknown database...).
        case connectionFailed
        /// An open session broke (server restart, terminated backend, network failure).
        case connectionLost
        /// Connecting took longer than the configured timeout.
        case timeout
        /// The server rejected a statement; see `sqlState`, `message` and `detail`.
        case queryFailed
        /// A parameter cannot be sent (for example a string holding a NUL character).
        case invalidParameter
        /// A column is missing, NULL where a value is required, or does not hold the requested type.
        case decodeFailed
        /// The call does not fit the connection's state (for example a transaction inside a transaction).
        case invalidState
        /// The connection, client or listener has been closed.
        case closed
    }

    public let code: Code
    /// What was being done, e.g. `connect to 127.0.0.1:5432/app` or `query: INSERT INTO streams ...`.
    public let what: String
    /// The SQLSTATE the server reported, when it reported one.
    public let sqlState: String?
    /// The server's (or libpq's) primary message.
    public let message: String?
    /// The server's detail line, when it sent one.
    public let detail: String?
    /// The violated constraint, for integrity errors.
    public let constraint: String?

    public init(
        code: Code, what: String, sqlState: String? = nil, message: String? = nil, detail: String? = nil,
        constraint: String? = nil
    ) {
        self.code = code
        self.what = what
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.constraint = constraint
    }

    /// SQLSTATE 57014: a statement was cancelled (statement_timeout, or a cancel request).
    static let queryCanceled = "57014"

    /// A unique constraint rejected the row (SQLSTATE 23505).
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// The transaction lost a serialization race or a deadlock (40001, 40P01); retrying it may succeed.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// The statement ran past the session's `statement_timeout` (SQLSTATE 57014 with the server's timeout
    /// message; a cancel request from a client shares the SQLSTATE but not the message).
    public var isStatementTimeout: Bool {
        sqlState == "57014" && (message?.contains("statement timeout") ?? false)
    }

    /// The statement waited past the session's `lock_timeout` for a row or table lock (SQLSTATE 55P03).
    public var isLockTimeout: Bool { sqlState == "55P03" }

    /// The server gave up on the statement because of one of the session's time limits; nothing it did was
    /// kept, and the statement may be retried later.
    public var isTimeLimit: Bool { isStatementTimeout || isLockTimeout }

    /// The session is gone or could not be opened (08xxx, server shutdown, broken connection); an idempotent
    /// statement may be retried on a fresh connection.
    public var isConnectionLoss: Bool {
        switch code {
        case .connectionLost, .connectionFailed, .timeout: return true
        default: break
        }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    public var description: String {
        var text = "PostgreSQL \(code.rawValue): \(what)"
        if let message { text += ": \(message)" }
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let detail { text += "; \(detail)" }
        return text
    }
}
