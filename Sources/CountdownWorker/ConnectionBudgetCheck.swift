import CountdownMaintenance
import CountdownStore
import Telemetry

/// Reads the server's connection limits once at start and logs whether the fleet at its maximum size fits
/// (`ConnectionBudget`): a warning with the numbers and the largest pool that would fit when it does not.
public struct ConnectionBudgetCheck: Sendable {
    public let fleet: ConnectionBudget
    private let database: any WorkerServiceStore
    private let logger: Logger

    public init(fleet: ConnectionBudget, database: any WorkerServiceStore, logger: Logger) {
        self.fleet = fleet
        self.database = database
        self.logger = logger
    }

    /// `max_connections` and the reserved slots (`reserved_connections` exists from PostgreSQL 16).
    public static func readServer(_ database: any WorkerServiceStore) async throws -> ConnectionBudget.Server {
        let limits = try await database.connectionLimits()
        return ConnectionBudget.Server(maxConnections: limits.maxConnections, reserved: limits.reserved)
    }

    /// Logs the outcome; a server that cannot be read is a warning too, never an error: the worker runs either way.
    /// Returns the excess (nil when the fleet fits or the server could not be read).
    @discardableResult
    public func run() async -> Int? {
        let server: ConnectionBudget.Server
        do {
            server = try await Self.readServer(database)
        } catch {
            logger.warn("could not read max_connections to check the connection budget", ["error": .string("\(error)")])
            return nil
        }
        var fields: [String: LogValue] = [
            "needed": .int(fleet.needed), "max_connections": .int(server.maxConnections), "reserved": .int(server.reserved),
            "max_workers": .int(fleet.maxWorkers), "pool_size": .int(fleet.workerPoolSize),
            "api_replicas": .int(fleet.apiReplicas), "api_pool_size": .int(fleet.apiPoolSize),
        ]
        guard let excess = fleet.excess(on: server) else {
            logger.info("the fleet's PostgreSQL connections fit max_connections at its maximum size", fields)
            return nil
        }
        fields["excess"] = .int(excess)
        fields["largest_fitting_pool_size"] = fleet.largestFittingPool(on: server).map { .int($0) } ?? .string("none")
        logger.warn("at FLEET_MAX_WORKERS the fleet would open more PostgreSQL connections than max_connections allows: "
                    + "lower DATABASE_POOL_SIZE or API_DATABASE_CONNECTIONS, raise max_connections or put PgBouncer in front "
                    + "(docs/operations.md, Connection budget)", fields)
        return excess
    }
}
