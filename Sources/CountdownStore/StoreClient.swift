import Postgres

/// A connection the stores run their statements on, as `StoreClient` lends it: callers pass it to the stores'
/// functions (`on:`) and never run SQL on it themselves.
public typealias StoreConnection = PostgresConnection

/// The database behind the store seams: implements the flows' protocols (`StartClaims`, ... in
/// `StoreClient+<Seam>.swift`) and the settler's (`StartOutcomeSettling`), each call one statement or one transaction.
/// For the other callers (the worker's periodic services, the operator's reports and actions, the pruner, the
/// console's pages, `countdown-admin`) it lends a pooled connection or one transaction to a closure of store calls.
/// Errors are told apart through `StoreError` rather than PostgreSQL's error codes.
public struct StoreClient: Sendable {
    private let client: PostgresClient

    public init(_ client: PostgresClient) {
        self.client = client
    }

    /// Runs `body` on a pooled connection, each statement in its own transaction.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        try await client.withConnection(body)
    }

    /// Runs `body` in one transaction, isolated as `isolation` asks (nil: PostgreSQL's default, read committed);
    /// `serializationRetries` extra runs are allowed after a deadlock or a serialization failure (only ask for them
    /// when running `body` again is safe).
    public func transaction<T: Sendable>(isolation: PostgresIsolation? = nil, serializationRetries: Int = 0,
                                         _ body: @escaping @Sendable (StoreConnection) throws -> T) async throws -> T {
        try await client.transaction(isolation: isolation, serializationRetries: serializationRetries, body)
    }
}
