import Foundation
import Postgres
import Testing
import TestSupport

/// Each distinct statement is parsed and planned once per session, then run by name.
@Suite struct PreparedStatementTests {
    static let lookup = "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1"

    @Test func aRepeatedStatementIsPreparedOnceAndKeepsAnsweringCorrectly() async throws {
        try await withTestClient { _, database in
            let session = try await ConfinedConnection(database.configuration)
            let sql = "SELECT $1::int8 * 2 AS doubled"
            let answers: [Int] = try await session.run { connection in
                try (1...5).map { try connection.query(sql, [$0])[0].decode("doubled") }
            }
            #expect(answers == [2, 4, 6, 8, 10])
            let prepared: Int = try await session.run { try $0.query(Self.lookup, [sql])[0].decode("n") }
            #expect(prepared == 1)
            await session.close()
        }
    }

    @Test func otherParameterTypesGetTheirOwnStatement() async throws {
        try await withTestClient { _, database in
            let session = try await ConfinedConnection(database.configuration)
            let sql = "SELECT $1::text IS NULL AS missing"
            let answers: [Bool] = try await session.run { connection in
                [try connection.query(sql, [nil])[0].decode("missing"),
                 try connection.query(sql, ["text"])[0].decode("missing"),
                 try connection.query(sql, [7])[0].decode("missing")]
            }
            #expect(answers == [true, false, false])
            // Strings and NULL go untyped (the server infers them), integers as int8: two statements.
            let prepared: Int = try await session.run { try $0.query(Self.lookup, [sql])[0].decode("n") }
            #expect(prepared == 2)
            await session.close()
        }
    }

    @Test func aFailedPreparationIsNotCachedAndTheErrorNamesTheStatement() async throws {
        try await withTestClient { _, database in
            let session = try await ConfinedConnection(database.configuration)
            let sql = "SELECT value FROM later_table WHERE id = $1"
            let first: PostgresError? = try await session.run { connection in
                do { _ = try connection.query(sql, [1]); return nil } catch let error as PostgresError { return error }
            }
            #expect(first?.sqlState == "42P01")
            #expect(first?.what.contains("later_table") == true)
            // Once the table exists the same text is prepared and runs.
            let value: String = try await session.run { connection in
                try connection.execute("CREATE TABLE later_table (id int8 PRIMARY KEY, value text NOT NULL)")
                try connection.execute("INSERT INTO later_table VALUES ($1, $2)", [1, "ok"])
                return try connection.query(sql, [1])[0].decode("value")
            }
            #expect(value == "ok")
            await session.close()
        }
    }

    @Test func turnedOffByTheURLNothingIsPrepared() async throws {
        try await withTestClient { _, database in
            var configuration = try PostgresConfiguration(url: database.url + (database.url.contains("?") ? "&" : "?") + "prepared_statements=false")
            #expect(configuration.preparesStatements == false)
            configuration.applicationName = "unprepared"
            let session = try await ConfinedConnection(configuration)
            let count: Int = try await session.run { connection in
                for value in 1...3 { _ = try connection.query("SELECT $1::int8 AS v", [value]) }
                return try connection.query("SELECT count(*) AS n FROM pg_prepared_statements")[0].decode("n")
            }
            #expect(count == 0)
            await session.close()
        }
    }

    @Test func theURLOptionIsValidated() throws {
        #expect(try PostgresConfiguration(url: "postgres://u@localhost/db").preparesStatements)
        #expect(try PostgresConfiguration(url: "postgres://u@localhost/db?prepared_statements=on").preparesStatements)
        #expect(try !PostgresConfiguration(url: "postgres://u@localhost/db?prepared_statements=0").preparesStatements)
        let error = #expect(throws: PostgresError.self) { try PostgresConfiguration(url: "postgres://u@localhost/db?prepared_statements=maybe") }
        #expect("\(String(describing: error))".contains("prepared_statements"))
    }
}
