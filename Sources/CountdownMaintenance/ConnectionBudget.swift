/// The fleet's PostgreSQL connections at its largest against what the server allows (docs/operations.md,
/// "Connection budget"):
///
///     workers × (DATABASE_POOL_SIZE + 3) + API replicas × API_DATABASE_CONNECTIONS + 2 per countdown-admin
///       <= max_connections - superuser_reserved_connections - reserved_connections
///
/// A worker learns the fleet's size from the manifests (`FLEET_MAX_WORKERS`: the autoscaler's maximum;
/// `FLEET_API_REPLICAS`; `API_DATABASE_CONNECTIONS`) and the server's limits at start, and warns when the fleet
/// would not fit: connections past the limit are refused with `too many clients already` only when the fleet
/// has scaled out, under the load it scaled for.
public struct ConnectionBudget: Sendable, Equatable {
    /// Connections a worker opens besides its pool: the outbox relay, its LISTEN connection, the reconciler.
    public static let dedicatedPerWorker = 3
    /// Room kept for `countdown-admin` runs (a migration, an operator's command).
    public static let adminConnections = 2

    public var maxWorkers: Int
    public var workerPoolSize: Int
    public var apiReplicas: Int
    public var apiPoolSize: Int

    public init(maxWorkers: Int, workerPoolSize: Int, apiReplicas: Int, apiPoolSize: Int) {
        self.maxWorkers = maxWorkers
        self.workerPoolSize = workerPoolSize
        self.apiReplicas = apiReplicas
        self.apiPoolSize = apiPoolSize
    }

    /// Connections the fleet may hold at once at its maximum size.
    public var needed: Int {
        maxWorkers * (workerPoolSize + Self.dedicatedPerWorker) + apiReplicas * apiPoolSize + Self.adminConnections
    }

    /// The server's limits as `SHOW` reports them.
    public struct Server: Sendable, Equatable {
        public var maxConnections: Int
        /// `superuser_reserved_connections` plus `reserved_connections` (PostgreSQL 16+).
        public var reserved: Int

        public init(maxConnections: Int, reserved: Int) {
            self.maxConnections = maxConnections
            self.reserved = reserved
        }

        /// Connections ordinary roles may open.
        public var available: Int { max(0, maxConnections - reserved) }
    }

    /// Nil when the fleet fits; else by how many connections it would exceed what the server allows.
    public func excess(on server: Server) -> Int? {
        needed > server.available ? needed - server.available : nil
    }

    /// The largest `DATABASE_POOL_SIZE` with which the fleet fits (nil when not even a pool of 1 does).
    public func largestFittingPool(on server: Server) -> Int? {
        guard maxWorkers > 0 else { return nil }
        let left = server.available - apiReplicas * apiPoolSize - Self.adminConnections
        let pool = left / maxWorkers - Self.dedicatedPerWorker
        return pool >= 1 ? pool : nil
    }
}
