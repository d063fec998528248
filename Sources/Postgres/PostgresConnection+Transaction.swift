import CLibPQ

extension PostgresConnection {
    /// Runs `body` between `BEGIN` and `COMMIT`. If `body` throws, the transaction is rolled back and
    /// `body`'s error is rethrown. A transaction the server aborted (a failed statement whose error `body`
    /// swallowed) is reported as `queryFailed` instead of silently committing nothing.
    public func transaction<T>(
        isolation: PostgresIsolation? = nil, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        let handle = try openHandle(what: "begin a transaction")
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(
                code: .invalidState, what: "begin a transaction", message: "the connection is already inside a transaction"
            )
        }
        try execute(isolation.map { "BEGIN ISOLATION LEVEL \($0.rawValue)" } ?? "BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
        if try run("COMMIT", []).commandTag == "ROLLBACK" {
            throw PostgresError(
                code: .queryFailed, what: "commit",
                message: "the transaction was rolled back because a statement in it failed"
            )
        }
        return value
    }
}
