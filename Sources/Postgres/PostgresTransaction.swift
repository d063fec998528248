/// A transaction open on a `PostgresSession`, handed to the body of `PostgresSession.transaction`. Its calls run
/// on the session's thread, on the connection that began the transaction and on no other.
public struct PostgresTransaction: Sendable {
    /// The server process that began the transaction (`PQbackendPID` at `BEGIN`).
    public let backendProcessID: Int32
    let session: PostgresSession
    let generation: Int

    /// Runs `body` inside the transaction. Throws `connectionLost` without running it when the connection that
    /// began the transaction broke or was replaced: the transaction is gone, and nothing runs outside it.
    /// Cancelling the task cancels the statement in flight; the transaction then rolls back.
    @discardableResult
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await onConnection(cancellable: true, what: "run in a transaction", body)
    }

    /// Runs `body` on the transaction's connection, or throws if that connection is no longer the one that
    /// began the transaction or the transaction has ended.
    func onConnection<T: Sendable>(
        cancellable: Bool, what: String, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let generation = self.generation
        let backendProcessID = self.backendProcessID
        return try await session.onThread(cancellable: cancellable) { slot, cancellation in
            guard let connection = slot.connection, slot.generation == generation, connection.isHealthy,
                connection.backendProcessID == backendProcessID
            else {
                throw PostgresError(
                    code: .connectionLost, what: what,
                    message: "the connection that began the transaction (backend \(backendProcessID)) was lost or replaced"
                )
            }
            guard connection.isInTransaction else {
                throw PostgresError(code: .invalidState, what: what, message: "the transaction has already ended")
            }
            return try slot.use(connection, cancellation, body)
        }
    }
}
