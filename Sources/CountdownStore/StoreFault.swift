import Postgres

/// What a failed store call means to a caller that answers for it (the API), so that caller needs no
/// `PostgresError`: the database is away, a session time limit ran out, or a foreign key found no user or stream.
/// Anything else is nil (an unexpected failure). `RowFault` is the same reading for the worker's quarantine.
public enum StoreFault: Sendable, Equatable {
    /// PostgreSQL cannot be reached (the connection was lost or could not be opened), or the client was closed.
    case unreachable
    /// `statement_timeout` or, with `lock`, `lock_timeout` ran out: nothing was kept, and the call may be repeated.
    case timeLimit(lock: Bool)
    /// A foreign key named a user that is not in `users`.
    case missingUser
    /// A foreign key named a stream that no longer exists.
    case missingStream

    public init?(_ error: any Error) {
        guard let error = error as? PostgresError else { return nil }
        if error.isConnectionLoss || error.code == .closed {
            self = .unreachable
        } else if error.isTimeLimit {
            self = .timeLimit(lock: error.isLockTimeout)
        } else if error.sqlState == "23503", error.constraint?.hasSuffix("user_id_fkey") == true {
            self = .missingUser
        } else if error.sqlState == "23503", error.constraint?.hasSuffix("stream_id_fkey") == true {
            self = .missingStream
        } else {
            return nil
        }
    }
}
