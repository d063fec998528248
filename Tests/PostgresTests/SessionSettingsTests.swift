import BlockingIO
import Foundation
import Postgres
import Testing
import TestSupport

/// Run-time parameters set at connect: every session has them, and a statement past `statement_timeout` or a
/// lock wait past `lock_timeout` fails with a transient error instead of waiting without limit.
@Suite struct SessionSettingsTests {
    @Test func everySessionCarriesItsSettingsAlongTheURLsOptions() async throws {
        try await withTestClient { _, database in
            var configuration = database.configuration
            configuration.options["options"] = "-c work_mem=8MB"
            configuration.setTimeouts(statementMilliseconds: 1500, lockMilliseconds: 250)
            configuration.sessionSettings["search_path"] = "public, pg_catalog"
            let client = PostgresClient(configuration: configuration, maxConnections: 1)
            defer { client.close() }
            let row = try await client.withConnection {
                try $0.query("SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l, current_setting('search_path') AS p, current_setting('work_mem') AS w").first
            }
            #expect(try row?.decode("s", as: String.self) == "1500ms")
            #expect(try row?.decode("l", as: String.self) == "250ms")
            #expect(try row?.decode("p", as: String.self) == "public, pg_catalog")
            #expect(try row?.decode("w", as: String.self) == "8MB")
        }
    }

    @Test func timeoutsAreTransientErrors() async throws {
        try await withTestClient { client, database in
            let limited = PostgresClient(configuration: Self.limited(database.configuration, statement: 200, lock: 200), maxConnections: 1)
            defer { limited.close() }
            let slow = await #expect(throws: PostgresError.self) {
                try await limited.withConnection(retryingOnConnectionLoss: false) { _ = try $0.query("SELECT pg_sleep(2)") }
            }
            #expect(slow?.isStatementTimeout == true && slow?.isTransient == true)

            try await client.withConnection { try $0.executeScript("CREATE TABLE held (id int PRIMARY KEY); INSERT INTO held VALUES (1)") }
            let holder = try await ConfinedConnection(database.configuration)
            try await holder.run { try $0.execute("BEGIN"); _ = try $0.query("SELECT id FROM held FOR UPDATE") }
            let locking = PostgresClient(configuration: Self.limited(database.configuration, statement: 5000, lock: 200), maxConnections: 1)
            defer { locking.close() }
            let waiting = await #expect(throws: PostgresError.self) {
                try await locking.withConnection(retryingOnConnectionLoss: false) { _ = try $0.execute("UPDATE held SET id = 2") }
            }
            #expect(waiting?.isLockTimeout == true && waiting?.isTransient == true)
            try await holder.run { try $0.execute("ROLLBACK") }
        }
    }

    static func limited(_ configuration: PostgresConfiguration, statement: Int, lock: Int) -> PostgresConfiguration {
        var configuration = configuration
        configuration.setTimeouts(statementMilliseconds: statement, lockMilliseconds: lock)
        return configuration
    }
}
