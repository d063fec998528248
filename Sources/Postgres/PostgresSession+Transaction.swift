extension PostgresSession {
    /// Runs `body` in one transaction that may span awaits (each `PostgresTransaction.run` is a call on the
    /// session's thread) and commits when `body` returns.
    ///
    /// The backend that ran `BEGIN` is recorded; if the connection broke or was replaced meanwhile, neither
    /// further statements nor `COMMIT` run on the new connection: the call throws `connectionLost` (a connection
    /// loss, transient) and nothing of the transaction is committed. If `body` throws or the task is cancelled
    /// (before `COMMIT` is sent), the transaction is rolled back and the error (or `CancellationError`) rethrown.
    /// A transaction the server aborted (a failed statement whose error `body` swallowed) throws `queryFailed`.
    @discardableResult
    public func transaction<T: Sendable>(
        isolation: PostgresIsolation? = nil, _ body: (PostgresTransaction) async throws -> T
    ) async throws -> T {
        let began = try await onThread { slot, cancellation in
            try slot.use(try slot.connected().connection, cancellation) { connection in
                try connection.begin(isolation: isolation)
                return (backend: connection.backendProcessID, generation: slot.generation)
            }
        }
        let transaction = PostgresTransaction(backendProcessID: began.backend, session: self, generation: began.generation)
        do {
            let value = try await body(transaction)
            try Task.checkCancellation()
            try await transaction.onConnection(cancellable: false, what: "commit") { try $0.commit() }
            return value
        } catch {
            _ = try? await transaction.onConnection(cancellable: false, what: "roll back") { try $0.rollback() }
            throw error
        }
    }
}
