import BlockingIO

/// One dedicated connection on its own thread whose state (an open transaction, advisory locks) lasts across
/// calls, for work that must hold a transaction open while it awaits something else (the outbox relay holds
/// its row locks while Redis accepts the batch): use `transaction { … }` for that. A broken connection is
/// replaced on the next `run`; a transaction begun on the old one cannot continue or commit on the new one.
/// Cancelling the awaiting task cancels the statement in flight (`PQcancel`).
public final class PostgresSession: Sendable {
    let configuration: PostgresConfiguration
    private let connection: ConnectionThread<PostgresConnection>

    public init(configuration: PostgresConfiguration, name: String = "postgres-session") {
        self.configuration = configuration
        connection = ConnectionThread(name: name, open: { try PostgresConnection(configuration: configuration) }, isUsable: \.isHealthy)
    }

    /// Runs `body` on the session's connection (opened, or reopened after a failure, as needed).
    @discardableResult
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await onThread { slot, cancellation in try slot.use(try slot.connected().connection, cancellation, body) }
    }

    /// Closes the connection (rolling back anything open) and ends the thread.
    public func close() { connection.close() }

    /// Runs `body` on the session's thread; when `cancellable`, cancelling the task cancels the statement that
    /// `body` runs through the `PostgresCancellation` it is given.
    func onThread<T: Sendable>(
        cancellable: Bool = true, _ body: @escaping @Sendable (ConnectionThread<PostgresConnection>, PostgresCancellation?) throws -> T
    ) async throws -> T {
        guard cancellable else { return try await connection.run { try body($0, nil) } }
        return try await PostgresCancellation.linked { cancellation in
            try await connection.run { try body($0, cancellation) }
        }
    }
}

extension ConnectionThread<PostgresConnection> {
    /// Runs `body` on `connection`, dropping the connection if it broke.
    func use<T>(
        _ connection: PostgresConnection, _ cancellation: PostgresCancellation?, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        do {
            guard let cancellation else { return try body(connection) }
            return try cancellation.run(on: connection, body)
        } catch {
            if !connection.isHealthy { self.connection = nil }
            throw error
        }
    }
}
