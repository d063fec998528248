import Foundation
import Postgres
import Testing
import TestSupport

@Suite struct ConnectionFailureTests {
    @Test func refusedConnectionFailsFastWithoutThePassword() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let port = refusing.port
        let error = await Self.firstQueryFails(url: "postgres://countdown:hunter2-secret@127.0.0.1:\(port)/postgres")
        #expect(error?.code == .connectionFailed)
        #expect(error?.isConnectionLoss == true)
        #expect(error?.message?.contains("refused") == true, "\(String(describing: error))")
        #expect(error?.what.contains("127.0.0.1:\(port)") == true)
        #expect(!"\(String(describing: error))".contains("hunter2"))
    }

    @Test func unreachableHostGivesUpWithinTheConnectTimeout() async throws {
        // A non-routable address: the connection either fails at once or times out after 2 s.
        let error = await Self.firstQueryFails(url: "postgres://countdown@10.255.255.1:5432/postgres?connect_timeout=2")
        #expect(error?.code == .timeout || error?.code == .connectionFailed)
    }

    @Test func missingDatabaseIsAConnectionFailure() async throws {
        var configuration = try PostgresConfiguration(url: TestEnvironment.databaseURL)
        configuration.database = TestEnvironment.uniqueName("absent")
        let client = PostgresClient(configuration: configuration, maxConnections: 1)
        defer { client.close() }
        let error = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message?.contains("does not exist") == true)
    }

    @Test func closedConnectionRefusesStatements() async throws {
        let configuration = try PostgresConfiguration(url: TestEnvironment.databaseURL)
        let code = try await offloaded {
            let connection = try PostgresConnection(configuration: configuration)
            #expect(connection.isHealthy)
            connection.close()
            #expect(!connection.isHealthy)
            do {
                _ = try connection.query("SELECT 1")
                return PostgresError.Code?.none
            } catch let error as PostgresError {
                return error.code
            }
        }
        #expect(code == .closed)
    }

    /// The error of a first query through a new client, which must come within 6 seconds.
    private static func firstQueryFails(url: String) async -> PostgresError? {
        guard let client = try? PostgresClient(url: url) else {
            Issue.record("the URL does not parse")
            return nil
        }
        defer { client.close() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
        #expect(clock.now - start < .seconds(6))
        return error
    }
}
