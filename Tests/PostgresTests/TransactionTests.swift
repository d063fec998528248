import BlockingIO
import Postgres
import Testing

@Suite struct TransactionTests {
    struct Abandon: Error {}

    @Test func commitsWhatTheBodyDid() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE items (v int NOT NULL)")
            let returned = try await client.transaction { connection in
                try connection.execute("INSERT INTO items VALUES (1), (2)")
            }
            #expect(returned == 2)
            #expect(try await client.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) == 2)
        }
    }

    @Test func rollsBackAndRethrowsWhenTheBodyThrows() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE items (v int NOT NULL)")
            await #expect(throws: Abandon.self) {
                try await client.transaction { connection in
                    try connection.execute("INSERT INTO items VALUES (1)")
                    throw Abandon()
                }
            }
            #expect(try await client.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) == 0)
        }
    }

    @Test func reportsATransactionTheServerAborted() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE items (v int NOT NULL)")
            let error = await #expect(throws: PostgresError.self) {
                try await client.transaction { connection in
                    try connection.execute("INSERT INTO items VALUES (1)")
                    _ = try? connection.execute("INSERT INTO items VALUES (NULL)")
                }
            }
            #expect(error?.message?.contains("rolled back") == true)
            #expect(try await client.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) == 0)
        }
    }

    @Test func serializationFailuresAreRetriedWhenAskedAndOnlyThen() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE items (v int NOT NULL)")
            let runs = Locked(0)
            // The first run loses a deadlock after writing: it is rolled back, and the second run commits.
            try await client.transaction(serializationRetries: 2) { connection in
                try connection.execute("INSERT INTO items VALUES (1)")
                if runs.withLock({ $0 += 1; return $0 }) == 1 {
                    throw PostgresError(code: .queryFailed, what: "test", sqlState: "40P01", message: "deadlock detected")
                }
            }
            #expect(runs.value == 2)
            #expect(try await client.query("SELECT count(*) AS n FROM items").first?.decode("n", as: Int.self) == 1)
            let error = await #expect(throws: PostgresError.self) {
                try await client.transaction { _ in
                    throw PostgresError(code: .queryFailed, what: "test", sqlState: "40001", message: "could not serialize access")
                }
            }
            #expect(error?.isSerializationFailure == true)
        }
    }

    @Test func refusesNestedTransactions() async throws {
        try await withTestClient { client, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await client.transaction { connection in
                    try connection.transaction { _ in }
                }
            }
            #expect(error?.code == .invalidState)
        }
    }

    @Test func aConnectionLeftInATransactionIsNotReused() async throws {
        try await withTestClient(maxConnections: 1) { client, _ in
            let first = try await client.withConnection { connection in
                try connection.execute("BEGIN")
                return connection.backendProcessID
            }
            let second = try await client.withConnection { connection in
                try connection.transaction { _ in connection.backendProcessID }
            }
            #expect(first != second)
        }
    }

    @Test func isolationLevelIsApplied() async throws {
        try await withTestClient { client, _ in
            let level = try await client.transaction(isolation: .serializable) { connection in
                try connection.query("SHOW transaction_isolation").first?.decode(0, as: String.self)
            }
            #expect(level == "serializable")
        }
    }
}
