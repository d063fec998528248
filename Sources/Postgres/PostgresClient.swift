import BlockingIO

/// A bounded pool of PostgreSQL connections, each living on its own thread, usable from async code.
///
/// A connection the server dropped (restart, terminated backend) is replaced on its next use; pass
/// `retryingOnConnectionLoss: true` for idempotent work to get one automatic reconnect-and-retry when the
/// connection breaks while the work runs. Cancelling the awaiting task cancels the statement in flight
/// (`PQcancel`); the call then throws `CancellationError`.
public final class PostgresClient: Sendable {
    public let configuration: PostgresConfiguration
    public let maxConnections: Int
    private let pool: ResourcePool<PostgresConnection>

    /// Connections are opened lazily, at most `maxConnections` at a time.
    public init(configuration: PostgresConfiguration, maxConnections: Int = 10) {
        self.configuration = configuration
        self.maxConnections = maxConnections
        pool = ResourcePool(
            name: "postgres", maxSize: maxConnections,
            factory: { try PostgresConnection(configuration: configuration) },
            isHealthy: { $0.isReusable }
        )
    }

    /// Parses `url` (see `PostgresConfiguration(url:)`).
    public convenience init(url: String, maxConnections: Int = 10) throws {
        self.init(configuration: try PostgresConfiguration(url: url), maxConnections: maxConnections)
    }

    deinit { pool.close() }

    /// Runs `body` synchronously on a pooled connection's own thread. A connection left inside a
    /// transaction or broken is not reused.
    public func withConnection<T: Sendable>(
        retryingOnConnectionLoss: Bool = false, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        do {
            return try await attempt(body)
        } catch let error as PostgresError where retryingOnConnectionLoss && error.isConnectionLoss {
            return try await attempt(body)
        }
    }

    /// Runs one statement and returns its rows.
    public func query(
        _ sql: String, _ parameters: [(any PostgresEncodable)?] = [], retryingOnConnectionLoss: Bool = false
    ) async throws -> [PostgresRow] {
        try await withConnection(retryingOnConnectionLoss: retryingOnConnectionLoss) { connection in
            Array(try connection.query(sql, parameters))
        }
    }

    /// Runs one statement and returns how many rows it affected.
    @discardableResult
    public func execute(
        _ sql: String, _ parameters: [(any PostgresEncodable)?] = [], retryingOnConnectionLoss: Bool = false
    ) async throws -> Int {
        try await withConnection(retryingOnConnectionLoss: retryingOnConnectionLoss) { connection in
            try connection.execute(sql, parameters)
        }
    }

    /// Runs `body` in a transaction on one connection (see `PostgresConnection.transaction`). Retrying on
    /// connection loss re-runs the whole transaction, so only ask for it when that is safe; the same holds for
    /// `serializationRetries`, the extra runs allowed after a deadlock or serialization failure (40P01, 40001).
    public func transaction<T: Sendable>(
        isolation: PostgresIsolation? = nil, retryingOnConnectionLoss: Bool = false, serializationRetries: Int = 0,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection(retryingOnConnectionLoss: retryingOnConnectionLoss) { connection in
            var retries = serializationRetries
            while true {
                do {
                    return try connection.transaction(isolation: isolation, body)
                } catch let error as PostgresError where error.isSerializationFailure && retries > 0 {
                    retries -= 1
                }
            }
        }
    }

    /// Connections currently lent out.
    public var connectionsInUse: Int { pool.inUse }

    /// Closes idle connections now and the others when their users finish; later calls fail with `closed`.
    public func close() { pool.close() }

    private func attempt<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        do {
            return try await PostgresCancellation.linked { cancellation in
                try await pool.withResource { connection in
                    try connection.reconnectIfDropped()
                    return try cancellation.run(on: connection, body)
                }
            }
        } catch let error as PoolClosedError {
            throw PostgresError(code: .closed, what: "use the connection pool", message: error.description)
        }
    }
}
