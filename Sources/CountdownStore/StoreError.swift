import BlockingIO

/// An outcome of a store call that its caller decides on, told apart without PostgreSQL's error codes.
public struct StoreError: Error, TransientError, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Another writer inserted a row with the same key between this call's read and its insert; the
        /// transaction rolled back and may be run again (the caller chooses how, e.g. `racing` start-ledger rows).
        case raced
    }

    public let code: Code
    /// What was being written, for logs.
    public let context: String

    public init(_ code: Code, context: String) {
        self.code = code
        self.context = context
    }

    /// A race is settled by running the transaction again.
    public var isTransient: Bool { code == .raced }

    public var description: String { "\(code.rawValue): \(context)" }
}
