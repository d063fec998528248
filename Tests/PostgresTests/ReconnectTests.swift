import BlockingIO
import Foundation
import Postgres
import Testing
import TestSupport

@Suite struct ReconnectTests {
    @Test func retriesOnceWhenTheConnectionBreaksMidStatement() async throws {
        try await withTestClient(maxConnections: 1) { client, _ in
            let attempts = Locked(0)
            let pid = try await client.withConnection(retryingOnConnectionLoss: true) { connection in
                let attempt = attempts.withLock { $0 += 1; return $0 }
                if attempt == 1 { _ = try connection.query("SELECT pg_terminate_backend(pg_backend_pid())") }
                return connection.backendProcessID
            }
            #expect(attempts.value == 2)
            #expect(pid > 0)

            let error = await #expect(throws: PostgresError.self) {
                try await client.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
            #expect(error?.isConnectionLoss == true)
            #expect(error?.code == .connectionLost)
            #expect(try await client.query("SELECT 1 AS one").first?.decode("one", as: Int.self) == 1)
        }
    }

    @Test func anIdleConnectionTheServerEndedIsReplacedTransparently() async throws {
        try await withTestClient(maxConnections: 1) { client, database in
            let pid = try await client.withConnection { $0.backendProcessID }
            try await database.administer { connection in
                _ = try connection.query("SELECT pg_terminate_backend($1::int)", [Int(pid)])
            }
            try await waitUntil("the backend to exit") {
                try await database.administer { connection in
                    try connection.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [Int(pid)]).isEmpty
                }
            }
            let replacement = try await client.withConnection { $0.backendProcessID }
            #expect(replacement != pid)
            let zone = try await client.query("SHOW TimeZone").first?.decode(0, as: String.self)
            #expect(zone == "UTC")
        }
    }

    /// The server's goodbye (FATAL) can be read before the end of file that follows it: the check on checkout must
    /// not hand out the ended session in between.
    @Test func aGoodbyeReadBeforeTheEndOfFileStillReplacesTheSession() async throws {
        let server = try GoodbyeServer()
        let configuration = try PostgresConfiguration(url: "postgres://countdown@127.0.0.1:\(server.port)/countdown?sslmode=disable")
        let client = PostgresClient(configuration: configuration, maxConnections: 1)
        defer { client.close() }
        let first = try await client.withConnection { $0.backendProcessID }
        #expect(first == GoodbyeServer.processID(ofSession: 1))

        server.sayGoodbyeToNewestSession()
        let replacement = try await client.withConnection { connection in
            (connection.backendProcessID, connection.isHealthy)
        }
        #expect(replacement.0 == GoodbyeServer.processID(ofSession: 2))
        #expect(replacement.1)
        #expect(server.sessionCount == 2)
    }

    @Test func clientAndListenerRecoverFromAServerRestart() async throws {
        let server = try await offloaded { try ThrowawayPostgres() }
        let configuration = try PostgresConfiguration(url: server.url)
        let client = PostgresClient(configuration: configuration, maxConnections: 2)
        let listener = PostgresListener(configuration: configuration)
        defer { client.close() }
        try await listener.listen("jobs")
        let startedBefore = try await client.query("SELECT pg_postmaster_start_time()::text AS t").first?.decode("t", as: String.self)
        try await client.execute("SELECT pg_notify($1, $2)", ["jobs", "before"])
        let first = try await listener.nextEvent(timeout: .seconds(5))
        guard case .notification(let before) = first, before.payload == "before" else {
            Issue.record("expected the first notification, got \(String(describing: first))")
            return
        }

        try await offloaded { try server.restart() }

        let startedAfter = try await client.query(
            "SELECT pg_postmaster_start_time()::text AS t", retryingOnConnectionLoss: true
        ).first?.decode("t", as: String.self)
        #expect(startedAfter != nil && startedAfter != startedBefore)
        #expect(try await client.query("SELECT 1 AS one").first?.decode("one", as: Int.self) == 1)

        #expect(try await listener.nextEvent(timeout: .seconds(15)) == .reconnected)
        try await client.execute("SELECT pg_notify($1, $2)", ["jobs", "after"])
        let event = try await listener.nextEvent(timeout: .seconds(5))
        guard case .notification(let notification) = event else {
            Issue.record("expected a notification after reconnecting, got \(String(describing: event))")
            return
        }
        #expect(notification.payload == "after")
        await listener.close()
        client.close()
        try await offloaded { server.stop() }
    }
}
