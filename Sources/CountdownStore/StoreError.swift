import BlockingIO
import Postgres

/// A failed store call as its callers decide on it, told apart without PostgreSQL's error codes: thrown by the
/// stores for a raced insert, and read from any failure with `StoreError(classifying:)`.
public struct StoreError: Error, TransientError, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Another writer inserted a row with the same key between this call's read and its insert; the
        /// transaction rolled back and may be run again (the caller chooses how, e.g. `racing` start-ledger rows).
        case raced
        /// PostgreSQL cannot be reached (the connection was lost or could not be opened), or the client was closed.
        case unreachable
        /// `statement_timeout` ran out: nothing was kept, and the call may be repeated.
        case timeLimit
        /// `lock_timeout` (or `NOWAIT`) ran out: nothing was kept, and the call may be repeated.
        case lockTimeLimit
        /// A foreign key named a user that is not in `users`.
        case missingUser
        /// A foreign key named a stream that no longer exists.
        case missingStream
        /// A fault of the rows read (an undecodable value, a date PostgreSQL cannot compute with), not of the system:
        /// the row is quarantined, not retried. The context is the reason to record.
        case rowData
        /// A start-ledger change that `StartLedgerMachine`'s table does not allow, or an outcome whose claim the row no
        /// longer holds (its sender was declared dead and another took it over, or the row moved on to its next
        /// generation): nothing was written for it.
        case refused
    }

    public let code: Code
    /// What was being written, for logs (for `rowData`, the reason to record).
    public let context: String

    public init(_ code: Code, context: String) {
        self.code = code
        self.context = context
    }

    /// Reads `error` once: a `StoreError` as it is, a PostgreSQL failure one of the codes tells; nil for anything
    /// else (an unexpected failure).
    public init?(classifying error: any Error) {
        if let error = error as? StoreError {
            self = error
            return
        }
        guard let error = error as? PostgresError else { return nil }
        let what = error.message ?? error.what
        if error.isConnectionLoss || error.code == .closed {
            self.init(.unreachable, context: what)
        } else if error.isTimeLimit {
            self.init(error.isLockTimeout ? .lockTimeLimit : .timeLimit, context: what)
        } else if error.sqlState == "23503", error.constraint?.hasSuffix("user_id_fkey") == true {
            self.init(.missingUser, context: what)
        } else if error.sqlState == "23503", error.constraint?.hasSuffix("stream_id_fkey") == true {
            self.init(.missingStream, context: what)
        } else if error.code == .decodeFailed {
            self.init(.rowData, context: "decode: " + what)
        } else if error.code == .queryFailed, let state = error.sqlState, state.hasPrefix("22") {
            // Class 22: data exception (datetime overflow, invalid text representation, numeric out of range...).
            self.init(.rowData, context: "data (SQLSTATE \(state)): " + what)
        } else {
            return nil
        }
    }

    /// The reason to record when `error` is a fault of the rows read (`rowData`); nil otherwise.
    public static func rowDataReason(of error: any Error) -> String? {
        guard let fault = StoreError(classifying: error), fault.code == .rowData else { return nil }
        return fault.context
    }

    /// The reason a row is quarantined for: the row fault's, or the error itself.
    static func reason(of error: any Error) -> String {
        rowDataReason(of: error) ?? "\(error)"
    }

    /// A race, a lost database or a time limit may pass; the data's faults and missing rows do not.
    public var isTransient: Bool {
        switch code {
        case .raced, .unreachable, .timeLimit, .lockTimeLimit: true
        case .missingUser, .missingStream, .rowData, .refused: false
        }
    }

    public var description: String { "\(code.rawValue): \(context)" }
}
