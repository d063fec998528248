import Postgres
import Testing
import TestSupport

@Suite struct CancellationTests {
    @Test func cancellingTheTaskCancelsASessionsHungQuery() async throws {
        try await withTestClient { _, database in
            let session = PostgresSession(configuration: database.configuration, name: "test-session")
            defer { session.close() }
            let pid = try await session.run { $0.backendProcessID }
            let task = Task { try await session.run { try $0.execute("SELECT pg_sleep(60)") } }
            try await cancelWhileSleeping(task, in: database)
            #expect(try await session.run { try $0.query("SELECT 1 AS one").first?.decode("one", as: Int.self) } == 1)
            #expect(try await session.run { $0.backendProcessID } == pid)
        }
    }

    @Test func cancellingTheTaskCancelsAPooledQuery() async throws {
        try await withTestClient(maxConnections: 1) { client, database in
            let task = Task { try await client.execute("SELECT pg_sleep(60)") }
            try await cancelWhileSleeping(task, in: database)
            #expect(try await client.query("SELECT 1 AS one").first?.decode("one", as: Int.self) == 1)
        }
    }

    @Test func aTaskCancelledBeforeItsCallSendsNothing() async throws {
        try await withTestClient { client, database in
            let session = PostgresSession(configuration: database.configuration, name: "test-session")
            defer { session.close() }
            try await session.run { try $0.execute("CREATE TABLE items (v int NOT NULL)") }
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await session.run { try $0.execute("INSERT INTO items VALUES (1)") }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(try await client.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) == 0)
        }
    }

    @Test func aStatementTimeoutIsATransientErrorNotACancellation() async throws {
        try await withTestClient { client, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await client.transaction { connection in
                    try connection.execute("SET LOCAL statement_timeout = '50ms'")
                    try connection.execute("SELECT pg_sleep(5)")
                }
            }
            #expect(error?.sqlState == "57014")
            #expect(error?.isTransient == true)
        }
    }
}
