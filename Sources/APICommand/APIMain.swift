import CountdownAPI
import Configuration
import Foundation
import HTTPServer
import JWT
import Lifecycle
import Postgres
import Telemetry

// countdown-api: the HTTP API of the integration guide (see docs/openapi.yaml). Configured by the environment
// (README, "Configuration"): DATABASE_URL, API_ADDR, API_METRICS_ADDR, API_JWT_SECRET / API_JWT_PUBLIC_KEY_FILE /
// API_JWT_KEYS, API_JWT_ISSUER, API_JWT_AUDIENCE, API_JWT_MAX_LIFETIME_SECONDS, the limits and timeouts, LOG_LEVEL,
// LOG_FORMAT, SHUTDOWN_GRACE_SECONDS.

/// `countdown-api`, run by the `countdown-api` executable and by the multi-call `countdown`.
public enum APIMain {
    /// Serves until SIGTERM / SIGINT, drains and exits the process. `arguments`: the program name, then its arguments.
    /// Its parts run as the services of one group: the request deadlines, the ownerless-device sweeper, the metrics
    /// listener and the API listener, stopped in reverse order within `SHUTDOWN_GRACE_SECONDS`.
    @MainActor public static func run(arguments: [String]) async -> Never {
        BuildInfo.answerVersionFlag(program: "countdown-api", arguments: arguments)

        let process = ServerProcess(
            program: "countdown-api", usage: "usage: countdown-api (configured by the environment; see docs/openapi.yaml and docs/deployment.md)")
        process.checkArguments(arguments)

        func fail(_ lines: String, code: Int32) -> Never { process.fail(lines, code: code) }

        let config: APIConfig
        let database: PostgresClient
        let keys: JWTKeySource
        let metrics = APIMetrics(registry: MetricsRegistry())
        do {
            config = try APIConfig.load()
            database = PostgresClient(configuration: try config.databaseConfiguration(), maxConnections: config.databaseConnections)
            keys = try config.jwt.makeKeySource(logger: config.logger, reloadFailures: metrics.jwtKeyReloadFailures)
        } catch let error as PostgresError {
            fail("DATABASE_URL: \(error.message ?? error.description)", code: 2)
        } catch {
            fail("\(error)", code: 2)
        }

        let logger = config.logger.with(["component": "countdown-api"])
        let shutdown = ShutdownSignal()
        let trap = SignalTrap { [grace = config.shutdownGraceSeconds] number in
            logger.info("stopping", ["signal": .int(Int(number)), "graceSeconds": .int(grace)])
            shutdown.trigger()
        }
        // Descriptors: the soft limit raised to the hard one, and client connections capped below it less the pool and a
        // reserve, so PostgreSQL always finds a descriptor however many clients connect.
        let descriptorLimit = DescriptorBudget.raiseSoftLimit()
        guard let budget = DescriptorBudget(descriptorLimit: descriptorLimit, configured: config.maxConnections, pool: config.databaseConnections) else {
            fail("API_DATABASE_CONNECTIONS: the open-file limit \(descriptorLimit) leaves fewer than \(DescriptorBudget.minimumConnections) "
                + "client connections after \(config.databaseConnections) database connections and a reserve of \(DescriptorBudget.reserve); "
                + "raise the limit (ulimit -n, the container's nofile) or lower API_DATABASE_CONNECTIONS", code: 2)
        }
        let budgetFields: [String: LogValue] = [
            "descriptorLimit": .int(descriptorLimit), "connections": .int(budget.connections), "overloadAt": .int(budget.overloadThreshold),
            "databaseConnections": .int(config.databaseConnections), "reserve": .int(DescriptorBudget.reserve),
        ]
        if budget.lowered {
            logger.warn("connection cap lowered to fit the open-file limit", budgetFields.merging(["configured": .int(config.maxConnections)]) { a, _ in a })
        } else {
            logger.info("connection budget", budgetFields)
        }
        let service = APIService(
            store: PostgresAPIStore(database: database), authenticator: Authenticator(keys: keys), metrics: metrics, logger: logger,
            policy: config.policy)
        let server = APIServer.make(
            service, address: config.address, threads: config.httpThreads, requestReadTimeout: config.requestReadTimeout,
            connectionLimit: budget.connections, overloadThreshold: budget.overloadThreshold, perIPConnectionLimit: config.connectionsPerIP,
            metrics: metrics)
        let metricsServer = APIServer.makeMetrics(service, address: config.metricsAddress)
        process.start(server, metrics: metricsServer)
        var services: [any Service] = [service.deadlineService]
        if config.ownerlessDeviceTTLHours > 0 {
            services.append(OwnerlessDeviceSweeper(database: database, ttlHours: config.ownerlessDeviceTTLHours, metrics: metrics,
                                                   logger: logger.with(["component": "ownerless-devices"])))
        }
        services.append(HTTPServerService(name: "metrics-server", server: metricsServer))
        services.append(HTTPServerService(name: "api-server", server: server) {
            service.beginDraining()
            _ = await service.waitUntilIdle()
        })
        let algorithm = switch config.jwt.tokenKey {
        case .hs256: "HS256"
        case .rs256: "RS256"
        case nil: "API_JWT_KEYS"
        }
        logger.info("listening", [
            "address": .string(server.boundAddress ?? ""), "metrics": .string(metricsServer.boundAddress ?? ""), "jwt": .string(algorithm),
            "jwtKeys": .string(config.jwt.keysPath ?? ""), "version": .string(BuildInfo.version),
        ])

        let outcome = await ServiceGroup(services: services, grace: .seconds(config.shutdownGraceSeconds), logger: logger).run(shutdown: shutdown)
        database.close()
        logger.info("stopped", ["drained": .bool(outcome.stoppedInTime)])
        withExtendedLifetime(trap) {}
        exit(outcome.failed ? 1 : 0)
    }
}
