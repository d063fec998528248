import BlockingIO

/// One dedicated connection on its own thread whose state (an open transaction, advisory locks) lasts across
/// calls, for work that must hold a transaction open while it awaits something else (the outbox relay holds
/// its row locks while Redis accepts the batch). A broken connection is replaced on the next call; callers see
/// that as a changed `backendProcessID` and must treat their transaction as gone.
public final class PostgresSession: Sendable {
    private final class Slot: @unchecked Sendable {
        var connection: PostgresConnection?  // touched only on `thread`
    }

    private let configuration: PostgresConfiguration
    private let thread: SerialThread
    private let slot = Slot()

    public init(configuration: PostgresConfiguration, name: String = "postgres-session") {
        self.configuration = configuration
        thread = SerialThread(name: name)
    }

    /// Runs `body` on the session's connection (opened, or reopened after a failure, as needed).
    public func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let configuration = self.configuration
        let slot = self.slot
        return try await thread.run {
            if let existing = slot.connection, !existing.isHealthy {
                slot.connection = nil
            }
            let connection = try slot.connection ?? PostgresConnection(configuration: configuration)
            slot.connection = connection
            do {
                return try body(connection)
            } catch {
                if !connection.isHealthy { slot.connection = nil }
                throw error
            }
        }
    }

    /// Closes the connection (rolling back anything open) and ends the thread.
    public func close() {
        let slot = self.slot
        thread.submit { slot.connection = nil }
        thread.stop()
    }
}
