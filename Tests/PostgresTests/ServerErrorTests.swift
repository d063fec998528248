import Foundation
import Postgres
import Testing
import TestSupport

@Suite struct ServerErrorTests {
    @Test func uniqueViolationIsRecognized() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE tokens (token text NOT NULL UNIQUE)")
            try await client.execute("INSERT INTO tokens VALUES ($1)", ["abc"])
            let error = await #expect(throws: PostgresError.self) {
                try await client.execute("INSERT INTO tokens VALUES ($1)", ["abc"])
            }
            #expect(error?.isUniqueViolation == true)
            #expect(error?.code == .queryFailed)
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "tokens_token_key")
            #expect(error?.detail?.contains("already exists") == true)
            #expect(error?.what.contains("INSERT INTO tokens") == true)
            #expect(error?.isSerializationFailure == false)
            #expect(error?.isConnectionLoss == false)
        }
    }

    @Test func serializationFailureIsRecognized() async throws {
        try await Self.withTwoSessions([
            "CREATE TABLE ledger (class int NOT NULL, value int NOT NULL)", "INSERT INTO ledger VALUES (1, 10), (2, 20)",
        ]) { _, first, second in
            let begin = "BEGIN ISOLATION LEVEL SERIALIZABLE"
            try await first.run { try $0.execute(begin); _ = try $0.query("SELECT sum(value) FROM ledger WHERE class = 1") }
            try await second.run { try $0.execute(begin); _ = try $0.query("SELECT sum(value) FROM ledger WHERE class = 2") }
            try await first.run { try $0.execute("INSERT INTO ledger VALUES (2, 30)") }
            let failure: PostgresError? = try await second.run { connection in
                do {
                    try connection.execute("INSERT INTO ledger VALUES (1, 300)")
                    return nil
                } catch let error as PostgresError {
                    return error
                }
            }
            try await first.run { try $0.execute("COMMIT") }
            let commitFailure: PostgresError? = try await second.run { connection in
                do {
                    try connection.execute(failure == nil ? "COMMIT" : "ROLLBACK")
                    return nil
                } catch let error as PostgresError {
                    return error
                }
            }
            let error = try #require(failure ?? commitFailure)
            #expect(error.isSerializationFailure)
            #expect(error.sqlState == "40001")
        }
    }

    @Test func deadlockCountsAsSerializationFailure() async throws {
        try await Self.withTwoSessions([
            "CREATE TABLE pair (id int PRIMARY KEY, v int NOT NULL)", "INSERT INTO pair VALUES (1, 0), (2, 0)",
        ]) { client, first, second in
            for (session, row) in [(first, 1), (second, 2)] {
                try await session.run { connection in
                    try connection.execute("SET deadlock_timeout = '100ms'")
                    try connection.execute("BEGIN")
                    try connection.execute("UPDATE pair SET v = 1 WHERE id = $1", [row])
                }
            }
            async let firstCrossing = Self.outcome(first, updating: 2)
            try await waitUntil("the first session to wait for the lock") {
                let waiting = try await client.query(
                    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
                return try waiting.first?.decode("n", as: Int.self) == 1
            }
            let secondOutcome = try await Self.outcome(second, updating: 1)
            let firstOutcome = try await firstCrossing
            let errors = [firstOutcome, secondOutcome].compactMap { $0 }
            #expect(errors.count == 1)
            #expect(errors.first?.isSerializationFailure == true)
            #expect(errors.first?.sqlState == "40P01")
        }
    }

    /// Runs `body` with two sessions of their own on a fresh database prepared by `setup`.
    private static func withTwoSessions(
        _ setup: [String], _ body: (PostgresClient, ConfinedConnection, ConfinedConnection) async throws -> Void
    ) async throws {
        try await withTestClient { client, database in
            for statement in setup { try await client.execute(statement) }
            let first = try await ConfinedConnection(database.configuration)
            let second = try await ConfinedConnection(database.configuration)
            do {
                try await body(client, first, second)
            } catch {
                await first.close()
                await second.close()
                throw error
            }
            await first.close()
            await second.close()
        }
    }

    /// Updates `row` and ends the transaction; returns the error if the update failed.
    private static func outcome(_ session: ConfinedConnection, updating row: Int) async throws -> PostgresError? {
        try await session.run { connection in
            do {
                try connection.execute("UPDATE pair SET v = 2 WHERE id = $1", [row])
                try connection.execute("COMMIT")
                return nil
            } catch let error as PostgresError {
                try connection.execute("ROLLBACK")
                return error
            }
        }
    }

    @Test func syntaxErrorsCarryTheServerMessage() async throws {
        try await withTestClient { client, _ in
            let error = await #expect(throws: PostgresError.self) { try await client.query("SELEC 1") }
            #expect(error?.code == .queryFailed)
            #expect(error?.sqlState == "42601")
            #expect(error?.message?.contains("syntax error") == true)
            #expect(error?.what == "query: SELEC 1")
        }
    }
}
