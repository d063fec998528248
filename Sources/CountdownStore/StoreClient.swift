import Postgres

/// A connection the stores run their statements on, as `StoreClient` lends it: callers pass it to the stores'
/// functions (`on:`) and never run SQL on it themselves.
public typealias StoreConnection = PostgresConnection

/// How a transaction of `StoreClient` isolates itself (nil: PostgreSQL's default, read committed).
public typealias StoreIsolation = PostgresIsolation

/// The database as the flows and the worker's services reach it: lends a pooled connection, or one transaction,
/// to a closure of store calls. The flows hold this facade, never a `PostgresClient`, and tell errors apart through
/// `StoreError` and `TransientError` rather than PostgreSQL's error codes.
public struct StoreClient: Sendable {
    private let client: PostgresClient

    public init(_ client: PostgresClient) {
        self.client = client
    }

    /// Runs `body` on a pooled connection, each statement in its own transaction.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        try await client.withConnection(body)
    }

    /// Runs `body` in one transaction; `serializationRetries` extra runs are allowed after a deadlock or a
    /// serialization failure (only ask for them when running `body` again is safe).
    public func transaction<T: Sendable>(isolation: StoreIsolation? = nil, serializationRetries: Int = 0,
                                         _ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        try await client.transaction(isolation: isolation, serializationRetries: serializationRetries, body)
    }
}
