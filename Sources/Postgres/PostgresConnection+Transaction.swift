import CLibPQ

extension PostgresConnection {
    /// Runs `body` between `BEGIN` and `COMMIT`. If `body` throws, the transaction is rolled back and
    /// `body`'s error is rethrown. A transaction the server aborted (a failed statement whose error `body`
    /// swallowed) is reported as `queryFailed` instead of silently committing nothing.
    public func transaction<T>(
        isolation: PostgresIsolation? = nil, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        try begin(isolation: isolation)
        let value: T
        do {
            value = try body(self)
        } catch {
            if isHealthy { _ = try? rollback() }
            throw error
        }
        try commit()
        return value
    }

    /// `BEGIN`, refusing a transaction inside a transaction.
    func begin(isolation: PostgresIsolation?) throws {
        let handle = try openHandle(what: "begin a transaction")
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(
                code: .invalidState, what: "begin a transaction", message: "the connection is already inside a transaction"
            )
        }
        try execute(isolation.map { "BEGIN ISOLATION LEVEL \($0.rawValue)" } ?? "BEGIN")
    }

    /// `COMMIT`; a transaction the server had aborted is reported as `queryFailed`.
    func commit() throws {
        if try run("COMMIT", []).commandTag == "ROLLBACK" {
            throw PostgresError(
                code: .queryFailed, what: "commit",
                message: "the transaction was rolled back because a statement in it failed"
            )
        }
    }

    /// `ROLLBACK`, sent even when the task that owns the transaction was cancelled.
    func rollback() throws {
        let handle = try openHandle(what: "roll back")
        _ = try check(PQexec(handle, "ROLLBACK"), what: "roll back")
    }
}
