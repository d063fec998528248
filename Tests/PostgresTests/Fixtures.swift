import BlockingIO
import Foundation
import Postgres
import TestSupport

/// Runs `body` with a client on a fresh database, then closes the client and drops the database.
func withTestClient<T: Sendable>(
    maxConnections: Int = 4, _ body: (PostgresClient, TestDatabase) async throws -> T
) async throws -> T {
    let database = try await TestDatabase.create(prefix: "pg")
    let client = PostgresClient(configuration: database.configuration, maxConnections: maxConnections)
    do {
        let result = try await body(client, database)
        client.close()
        try await database.drop()
        return result
    } catch {
        client.close()
        try? await database.drop()
        throw error
    }
}

/// Runs blocking test work (server restarts, raw connections) on a thread of its own.
func offloaded<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let thread = SerialThread(name: "test-blocking")
    defer { thread.stop() }
    return try await thread.run(body)
}

/// A connection confined to its own thread, for tests that interleave statements of several sessions.
final class ConfinedConnection: @unchecked Sendable {
    private let thread = SerialThread(name: "test-session")
    private var connection: PostgresConnection?  // touched only on `thread`

    init(_ configuration: PostgresConfiguration) async throws {
        try await thread.run { self.connection = try PostgresConnection(configuration: configuration) }
    }

    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await thread.run {
            guard let connection = self.connection else {
                throw PostgresError(code: .closed, what: "test session", message: "closed")
            }
            return try body(connection)
        }
    }

    func close() async {
        _ = try? await thread.run { self.connection = nil }
        thread.stop()
    }
}

/// Microseconds since 1970, the precision PostgreSQL keeps.
func microseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSinceReferenceDate * 1_000_000).rounded()) + 978_307_200_000_000
}

func date(microseconds: Int64) -> Date {
    Date(timeIntervalSinceReferenceDate: Double(microseconds - 978_307_200_000_000) / 1_000_000)
}
