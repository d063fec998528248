import Configuration
import CountdownAPI
import CountdownConsole
import CountdownDomain
import CountdownMaintenance
import DelayQueue
import Foundation
import HTTPServer
import Lifecycle
import Postgres
import PushGuard
import Redis
import Telemetry

// countdown-console: the operator console (SPEC 11, docs/console.md). Configured by the environment (README,
// "Configuration"): CONSOLE_ADDR, CONSOLE_METRICS_ADDR, CONSOLE_AUTH, CONSOLE_USER_HEADER, CONSOLE_GROUPS_HEADER,
// CONSOLE_TRUSTED_PROXIES, CONSOLE_OPERATOR_GROUPS, CONSOLE_CSRF_KEY, CONSOLE_JWT_*, and the worker's DATABASE_URL,
// REDIS_URL, COUNTDOWN_NAMESPACE, flow settings, LOG_LEVEL, LOG_FORMAT.

/// `countdown-console`, run by the `countdown-console` executable and by the multi-call `countdown`.
public enum ConsoleMain {
    /// Serves until SIGTERM / SIGINT and exits the process. `arguments`: the program name, then its arguments.
    /// The metrics listener and the console's listener run as the services of one group, stopped in reverse order.
    @MainActor public static func run(arguments: [String]) async -> Never {
        BuildInfo.answerVersionFlag(program: "countdown-console", arguments: arguments)

        let process = ServerProcess(program: "countdown-console", usage: "usage: countdown-console (configured by the environment; see docs/console.md)")
        process.checkArguments(arguments)

        func fail(_ lines: String, code: Int32) -> Never { process.fail(lines, code: code) }

        let config: ConsoleConfig
        let database: PostgresClient
        let metrics = ConsoleMetrics(registry: MetricsRegistry())
        let mode: ConsoleAuthenticator.Mode
        do {
            config = try ConsoleConfig.load()
            database = PostgresClient(configuration: try config.worker.postgresConfiguration(), maxConnections: 4)
            switch config.auth {
            case .proxy: mode = .proxy(userHeader: config.userHeader, groupsHeader: config.groupsHeader, trusted: config.trustedProxies)
            case .jwt:
                guard let jwt = config.jwt else { fail("CONSOLE_JWT_SECRET: required with CONSOLE_AUTH=jwt", code: 2) }
                mode = .jwt(try jwt.makeKeySource(logger: config.worker.logger))
            }
        } catch let error as PostgresError {
            fail("DATABASE_URL: \(error.message ?? error.description)", code: 2)
        } catch {
            fail("\(error)", code: 2)
        }

        let logger = config.worker.logger.with(["component": "countdown-console"])
        let shutdown = ShutdownSignal()
        let trap = SignalTrap { number in
            logger.info("stopping", ["signal": .int(Int(number))])
            shutdown.trigger()
        }
        let redis = RedisClient(configuration: config.worker.redis, poolSize: 4)
        let queue = RedisDelayQueue(client: redis, namespace: config.worker.namespace, policy: RetryPolicy(maxAttempts: config.worker.maxAttempts))
        let backend = ConsoleBackend(
            database: database, queue: queue,
            probe: RedisFleetProbe(redis: redis, namespace: config.worker.namespace,
                                   guardRule: TokenGuard(minRefusals: config.worker.tokenGuardMinRefusals, ratio: config.worker.tokenGuardRatio)),
            settings: config.worker.flow, transport: config.worker.pushTransport)
        let service = ConsoleService(
            backend: backend, authenticator: ConsoleAuthenticator(mode: mode, operatorGroups: config.operatorGroups),
            csrf: CSRFTokens(key: config.csrfKey ?? CSRFTokens.randomKey()), metrics: metrics, logger: logger)
        let server = ConsoleServer.make(service, address: config.address)
        let metricsServer = ConsoleServer.makeMetrics(service, address: config.metricsAddress)
        process.start(server, metrics: metricsServer)
        logger.info("listening", [
            "address": .string(server.boundAddress ?? ""), "metrics": .string(metricsServer.boundAddress ?? ""), "auth": .string(config.auth.rawValue),
            "operatorGroups": .string(config.operatorGroups.sorted().joined(separator: ",")),
            "csrfKey": .string(config.csrfKey == nil ? "random per process" : "CONSOLE_CSRF_KEY"), "version": .string(BuildInfo.version),
        ])

        let services: [any Service] = [HTTPServerService(name: "metrics-server", server: metricsServer), HTTPServerService(name: "console-server", server: server)]
        let outcome = await ServiceGroup(services: services, grace: .seconds(config.worker.shutdownGraceSeconds), logger: logger).run(shutdown: shutdown)
        withExtendedLifetime(trap) {}
        redis.close()
        database.close()
        exit(outcome.failed ? 1 : 0)
    }
}
