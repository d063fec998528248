import BlockingIO
import Foundation
import Postgres
import Testing
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

/// Ends backend `pid` from another connection and waits until it is gone.
func terminate(_ pid: Int32, _ database: TestDatabase) async throws {
    try await database.administer { _ = try $0.query("SELECT pg_terminate_backend($1::int)", [Int(pid)]) }
    try await waitUntil("backend \(pid) to exit") {
        try await database.administer { connection in
            try connection.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [Int(pid)]).isEmpty
        }
    }
}

/// Waits until a session of `database` is inside `pg_sleep` (its wait event), not merely active with a statement that
/// calls it: a pooled statement is prepared first, and a cancel sent while the `PREPARE` ran (active, the same query
/// text) reached an idle session and was lost, so the statement then slept its whole minute.
func waitUntilSleeping(in database: TestDatabase) async throws {
    let name = database.name
    try await waitUntil("a pg_sleep to run in \(name)") {
        try await database.administer { connection in
            !(try connection.query("""
                SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND wait_event = 'PgSleep'
                """, [name]).isEmpty)
        }
    }
}

/// Cancels `task` once a session of `database` runs `pg_sleep`, and expects it to end with `CancellationError`
/// within a few seconds (not the minute the statement asked for).
func cancelWhileSleeping<T: Sendable>(_ task: Task<T, any Error>, in database: TestDatabase) async throws {
    try await waitUntilSleeping(in: database)
    let clock = ContinuousClock()
    let cancelled = clock.now
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(clock.now - cancelled < .seconds(5))
}
