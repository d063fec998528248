import CountdownMaintenance
import CountdownStore
import Telemetry

/// Reads the server's connection limits once at start and logs whether the fleet at its maximum size fits
/// (`ConnectionBudget`): a warning with the numbers and the largest pool that would fit when it does not. Both
/// sides go to `countdown_connection_budget` (`part` needed and available) for the alert.
public struct ConnectionBudgetCheck: Sendable {
    public let fleet: ConnectionBudget
    let database: StoreClient
    let logger: Logger
    var gauge: Gauge? = nil

    /// `max_connections` and the reserved slots (`reserved_connections` exists from PostgreSQL 16).
    public static func readServer(_ database: StoreClient) async throws -> ConnectionBudget.Server {
        let limits = try await database.withConnection { try ServerSettingsQueries.connectionLimits(on: $0) }
        return ConnectionBudget.Server(maxConnections: limits.maxConnections, reserved: limits.reserved)
    }

    /// Logs the outcome; a server that cannot be read is a warning too, never an error: the worker runs either way.
    /// Returns the excess (nil when the fleet fits or the server could not be read).
    @discardableResult
    public func run() async -> Int? {
        gauge?.set(Double(fleet.needed), labels: "needed")
        let server: ConnectionBudget.Server
        do {
            if let clients = fleet.poolerMaxClients {
                server = ConnectionBudget.Server(maxConnections: clients, reserved: 0)
            } else {
                server = try await Self.readServer(database)
            }
        } catch {
            logger.warn("could not read max_connections to check the connection budget", ["error": .string("\(error)")])
            return nil
        }
        gauge?.set(Double(server.available), labels: "available")
        var fields: [String: LogValue] = [
            "needed": .int(fleet.needed), "max_connections": .int(server.maxConnections), "reserved": .int(server.reserved),
            "max_workers": .int(fleet.maxWorkers), "pool_size": .int(fleet.workerPoolSize),
            "api_replicas": .int(fleet.apiReplicas), "api_pool_size": .int(fleet.apiPoolSize),
            "worker_surge": .int(fleet.workerSurge), "api_surge": .int(fleet.apiSurge),
            "console_replicas": .int(fleet.consoleReplicas), "console_surge": .int(fleet.consoleSurge),
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
