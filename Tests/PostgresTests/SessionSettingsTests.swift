import Foundation
@testable import Postgres
import Testing
import TestSupport

@Suite("Session settings and time limits")
struct SessionSettingsTests {
    @Test func settingsAreSentAsOptionsAfterTheURLsOwn() throws {
        var configuration = try PostgresConfiguration(url: "postgres://u@h/db?options=-c%20search_path%3Dapp")
        configuration.setTimeouts(statementMilliseconds: 30000, lockMilliseconds: 5000)
        configuration.sessionSettings["application.note"] = #"two words\"#
        let options = configuration.libpqParameters.first { $0.0 == "options" }?.1
        #expect(options == #"-c search_path=app -c application.note=two\ words\\ -c lock_timeout=5000 -c statement_timeout=30000"#)
        #expect(try PostgresConfiguration(url: "postgres://u@h/db").libpqParameters.allSatisfy { $0.0 != "options" })
    }

    @Test func everySessionHasTheTimeLimitsAndTheirErrorsAreTyped() async throws {
        let database = try await TestDatabase.create(prefix: "pgtime")
        var configuration = database.configuration
        configuration.setTimeouts(statementMilliseconds: 300, lockMilliseconds: 200)
        let limited = PostgresClient(configuration: configuration, maxConnections: 2)
        let plain = PostgresClient(configuration: database.configuration, maxConnections: 1)
        defer {
            limited.close()
            plain.close()
        }
        let shown = try await limited.query("SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l").first
        #expect(try shown?.decode("s", as: String.self) == "300ms")
        #expect(try shown?.decode("l", as: String.self) == "200ms")

        let slow = await #expect(throws: PostgresError.self) { try await limited.execute("SELECT pg_sleep(2)") }
        #expect(slow?.isStatementTimeout == true)
        #expect(slow?.isLockTimeout == false)
        #expect(slow?.isTimeLimit == true)
        #expect(slow?.isConnectionLoss == false)

        try await plain.execute("CREATE TABLE t (id int PRIMARY KEY)")
        try await plain.execute("INSERT INTO t VALUES (1)")
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await plain.transaction { connection in
                try connection.execute("SELECT 1 FROM t WHERE id = 1 FOR UPDATE")
                locked.signal()
                release.wait()
            }
        }
        try await waitUntil(timeout: .seconds(5), "the row is locked") { locked.wait(timeout: .now()) == .success }
        let waited = await #expect(throws: PostgresError.self) { try await limited.execute("UPDATE t SET id = 2 WHERE id = 1") }
        release.signal()
        try await holder.value
        #expect(waited?.isLockTimeout == true)
        #expect(waited?.isStatementTimeout == false)
        #expect(waited?.isTimeLimit == true)
        #expect(try await limited.execute("UPDATE t SET id = 2 WHERE id = 1") == 1, "the session is usable afterwards")
        try await database.drop()
    }
}
