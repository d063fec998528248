/// The fleet's PostgreSQL connections at its largest, a rollout under way, against what the server allows
/// (docs/operations.md, "Connection budget"):
///
///     (workers + worker surge) × (DATABASE_POOL_SIZE + 3) + (API replicas + API surge) × API_DATABASE_CONNECTIONS
///       + (console replicas + console surge) × 4 + 2 per countdown-admin
///       <= max_connections - superuser_reserved_connections - reserved_connections
///
/// A worker learns the fleet's size from the manifests (`FLEET_MAX_WORKERS`: the autoscaler's maximum;
/// `FLEET_WORKER_SURGE`, `FLEET_API_SURGE`, `FLEET_CONSOLE_SURGE`: the pods a rolling update adds, the Deployments'
/// `maxSurge`; `FLEET_API_REPLICAS`: the API autoscaler's maximum; `FLEET_CONSOLE_REPLICAS`;
/// `API_DATABASE_CONNECTIONS`) and the server's limits at start, reports both as `countdown_connection_budget`
/// and warns when the fleet would not fit: connections past the limit are refused with `too many clients already`
/// only when the fleet has scaled out, or during a rollout, under the load it scaled for.
public struct ConnectionBudget: Sendable, Equatable {
    /// Connections a worker opens besides its pool: the outbox relay, its LISTEN connection, the reconciler.
    public static let dedicatedPerWorker = 3
    /// Room kept for `countdown-admin` runs (a migration, an operator's command).
    public static let adminConnections = 2
    /// The PostgreSQL pool of each `countdown-console` process.
    public static let consoleConnections = 4

    public var maxWorkers: Int
    public var workerPoolSize: Int
    public var apiReplicas: Int
    public var apiPoolSize: Int
    /// Pods a rolling update adds beyond the replica counts (the Deployments' resolved `maxSurge`).
    public var workerSurge: Int = 0
    public var apiSurge: Int = 0
    public var consoleReplicas: Int = 0
    public var consoleSurge: Int = 0
    /// Behind a pooler (PgBouncer): the client connections it accepts (`FLEET_POOLER_MAX_CLIENTS`, its
    /// `max_client_conn`), compared instead of the server's `max_connections`, which the pooler already caps.
    public var poolerMaxClients: Int?

    /// Kubernetes' default `maxSurge` (25 %, rounded up) of `replicas`.
    public static func defaultSurge(_ replicas: Int) -> Int { (replicas + 3) / 4 }

    /// Connections the fleet may hold at once at its maximum size, in the middle of a rollout.
    public var needed: Int {
        (maxWorkers + workerSurge) * (workerPoolSize + Self.dedicatedPerWorker) + (apiReplicas + apiSurge) * apiPoolSize
            + (consoleReplicas + consoleSurge) * Self.consoleConnections + Self.adminConnections
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
        let workers = maxWorkers + workerSurge
        guard workers > 0 else { return nil }
        let left = server.available - (apiReplicas + apiSurge) * apiPoolSize - (consoleReplicas + consoleSurge) * Self.consoleConnections
            - Self.adminConnections
        let pool = left / workers - Self.dedicatedPerWorker
        return pool >= 1 ? pool : nil
    }
}
