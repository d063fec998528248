import BlockingIO

/// One dedicated connection on its own thread whose state (an open transaction, advisory locks) lasts across
/// calls, for work that must hold a transaction open while it awaits something else (the outbox relay holds
/// its row locks while Redis accepts the batch): use `transaction { … }` for that. A broken connection is
/// replaced on the next `run`; a transaction begun on the old one cannot continue or commit on the new one.
/// Cancelling the awaiting task cancels the statement in flight (`PQcancel`).
public final class PostgresSession: Sendable {
    /// The session's connection; touched only on `thread`.
    final class Slot: @unchecked Sendable {
        var connection: PostgresConnection?
        /// Counts the connections opened, so a transaction can tell its own connection from a replacement.
        var generation = 0

        /// The open connection, or a new one in place of a missing or broken one.
        func open(_ configuration: PostgresConfiguration) throws -> PostgresConnection {
            if let connection, connection.isHealthy { return connection }
            connection = nil
            let opened = try PostgresConnection(configuration: configuration)
            connection = opened
            generation += 1
            return opened
        }

        /// Runs `body` on `connection`, dropping the connection if it broke.
        func use<T>(
            _ connection: PostgresConnection, _ cancellation: PostgresCancellation?,
            _ body: (PostgresConnection) throws -> T
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

    let configuration: PostgresConfiguration
    private let thread: SerialThread
    private let slot = Slot()

    public init(configuration: PostgresConfiguration, name: String = "postgres-session") {
        self.configuration = configuration
        thread = SerialThread(name: name)
    }

    /// Runs `body` on the session's connection (opened, or reopened after a failure, as needed).
    @discardableResult
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let configuration = self.configuration
        return try await onThread { slot, cancellation in
            try slot.use(try slot.open(configuration), cancellation, body)
        }
    }

    /// Closes the connection (rolling back anything open) and ends the thread.
    public func close() {
        let slot = self.slot
        thread.submit { slot.connection = nil }
        thread.stop()
    }

    /// Runs `body` on the session's thread; when `cancellable`, cancelling the task cancels the statement that
    /// `body` runs through the `PostgresCancellation` it is given.
    func onThread<T: Sendable>(
        cancellable: Bool = true, _ body: @escaping @Sendable (Slot, PostgresCancellation?) throws -> T
    ) async throws -> T {
        let slot = self.slot
        guard cancellable else { return try await thread.run { try body(slot, nil) } }
        return try await PostgresCancellation.linked { cancellation in
            try await thread.run { try body(slot, cancellation) }
        }
    }
}
