import BlockingIO
import Postgres
import Testing
import TestSupport

@Suite struct SessionTransactionTests {
    struct Abandon: Error {}

    @Test func commitsWritesMadeAcrossAwaits() async throws {
        try await withTestSession { session, _ in
            let pid = try await session.transaction { transaction in
                try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                await Task.yield()
                try await transaction.run { try $0.execute("INSERT INTO items VALUES (2)") }
                return try await transaction.run { $0.backendProcessID }
            }
            #expect(pid > 0)
            #expect(try await count(session) == 2)
        }
    }

    @Test func rollsBackAndRethrowsWhenTheBodyThrows() async throws {
        try await withTestSession { session, _ in
            await #expect(throws: Abandon.self) {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    throw Abandon()
                }
            }
            let remaining = try await count(session)
            #expect(remaining == 0)
            try await session.transaction { transaction in
                try await transaction.run { try $0.execute("INSERT INTO items VALUES (3)") }
            }
            #expect(try await count(session) == 1)
        }
    }

    @Test func refusesToCommitOnTheConnectionThatReplacedATerminatedBackend() async throws {
        try await withTestSession { session, database in
            let error = await #expect(throws: PostgresError.self) {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1), (2)") }
                    try await terminate(transaction.backendProcessID, database)
                    // The session's next plain call finds the connection broken, the one after opens a new one.
                    _ = try? await session.run { try $0.query("SELECT 1") }
                    let replacement = try await session.run { $0.backendProcessID }
                    #expect(replacement != transaction.backendProcessID)
                }
            }
            #expect(error?.code == .connectionLost)
            #expect(error?.isConnectionLoss == true)
            #expect(error?.isTransient == true)
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }

    @Test func refusesStatementsOnTheConnectionThatReplacedATerminatedBackend() async throws {
        try await withTestSession { session, database in
            let error = await #expect(throws: PostgresError.self) {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    try await terminate(transaction.backendProcessID, database)
                    _ = try? await session.run { try $0.query("SELECT 1") }
                    // Without the check this would run in autocommit on the new connection and stick.
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (2)") }
                }
            }
            #expect(error?.code == .connectionLost)
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }

    @Test func aTerminatedBackendFailsTheTransactionsNextStatement() async throws {
        try await withTestSession { session, database in
            let error = await #expect(throws: PostgresError.self) {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    try await terminate(transaction.backendProcessID, database)
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (2)") }
                }
            }
            #expect(error?.isConnectionLoss == true)
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }

    @Test func cancellingTheTaskRollsBackAWaitingTransaction() async throws {
        try await withTestSession { session, _ in
            let inserted = AsyncGate()
            let task = Task {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    inserted.open()
                    try await Task.sleep(for: .seconds(60))
                }
            }
            await inserted.pass()
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }

    @Test func cancellingTheTaskCancelsTheStatementAndRollsBack() async throws {
        try await withTestSession { session, database in
            let task = Task {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    try await transaction.run { try $0.execute("SELECT pg_sleep(60)") }
                }
            }
            try await cancelWhileSleeping(task, in: database)
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }

    @Test func refusesATransactionInsideATransaction() async throws {
        try await withTestSession { session, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await session.transaction { _ in
                    try await session.transaction { _ in }
                }
            }
            #expect(error?.code == .invalidState)
        }
    }

    @Test func reportsATransactionTheServerAborted() async throws {
        try await withTestSession { session, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await session.transaction { transaction in
                    try await transaction.run { try $0.execute("INSERT INTO items VALUES (1)") }
                    _ = try? await transaction.run { try $0.execute("INSERT INTO items VALUES (NULL)") }
                }
            }
            #expect(error?.message?.contains("rolled back") == true)
            let remaining = try await count(session)
            #expect(remaining == 0)
        }
    }
}

/// Runs `body` with a session on a fresh database holding an empty table `items (v int NOT NULL)`.
private func withTestSession(_ body: (PostgresSession, TestDatabase) async throws -> Void) async throws {
    try await withTestClient { _, database in
        let session = PostgresSession(configuration: database.configuration, name: "test-session")
        defer { session.close() }
        try await session.run { try $0.execute("CREATE TABLE items (v int NOT NULL)") }
        try await body(session, database)
    }
}

private func count(_ session: PostgresSession) async throws -> Int? {
    try await session.run { try $0.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) }
}
