import Foundation
import Postgres

/// A fresh, empty database of a test's own on the shared test server.
public struct TestDatabase: Sendable {
    /// The database name (lowercase letters, digits and underscores).
    public let name: String
    /// URL of the new database (same server and user as `TestEnvironment.databaseURL`).
    public let url: String
    public let configuration: PostgresConfiguration
    private let serverURL: String

    /// Creates a database named `<prefix>_<random>` on the server at `serverURL`.
    public static func create(prefix: String = "test", serverURL: String = TestEnvironment.databaseURL) async throws -> TestDatabase {
        let name = TestEnvironment.uniqueName(prefix)
        try await onServer(serverURL) { connection in
            try connection.execute("CREATE DATABASE \(try connection.quoteIdentifier(name))")
        }
        guard var components = URLComponents(string: serverURL) else {
            throw PostgresError(code: .invalidURL, what: "build a test database URL", message: "the server URL does not parse")
        }
        components.path = "/" + name
        guard let url = components.string else {
            throw PostgresError(code: .invalidURL, what: "build a test database URL", message: "the URL does not render")
        }
        return TestDatabase(name: name, url: url, configuration: try PostgresConfiguration(url: url), serverURL: serverURL)
    }

    /// Drops the database, disconnecting whoever is still connected to it.
    public func drop() async throws {
        let name = self.name
        try await Self.onServer(serverURL) { connection in
            try connection.execute("DROP DATABASE IF EXISTS \(try connection.quoteIdentifier(name)) WITH (FORCE)")
        }
    }

    /// Runs `body` as the server's administrator (on the server URL's own database).
    @discardableResult
    public func administer<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await Self.onServer(serverURL, body)
    }

    @discardableResult
    private static func onServer<T: Sendable>(
        _ serverURL: String, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let client = try PostgresClient(url: serverURL, maxConnections: 1)
        defer { client.close() }
        return try await client.withConnection(body)
    }
}
