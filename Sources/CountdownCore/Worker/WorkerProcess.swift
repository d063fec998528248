import DelayQueue
import Foundation
import HTTPClient
import Postgres
import Push
import PushPayloads
import Redis
import Telemetry

/// Everything one `countdown-worker` process runs, built from the validated configuration.
public struct WorkerProcess: Sendable {
    public let config: CountdownConfig
    public let logger: Logger
    public let metrics: WorkerMetrics
    public let services: [any Service]
    private let closers: [@Sendable () -> Void]
    private let clock: ServerClock
    private let redis: RedisClient

    /// Opens clients lazily (nothing connects until a service runs) and builds the services in start order:
    /// health server, clock sync, stats poller, reconciler, outbox relay, dispatcher. Stopping goes the other way.
    public init(config: CountdownConfig, logger: Logger) throws {
        self.config = config
        self.logger = logger
        let metrics = WorkerMetrics()
        self.metrics = metrics
        let postgresConfiguration = try PostgresConfiguration(url: config.databaseURL)
        let database = PostgresClient(configuration: postgresConfiguration, maxConnections: config.databasePoolSize)
        let redis = RedisClient(configuration: config.redis, poolSize: 8)
        let queue = RedisDelayQueue(client: redis, namespace: config.namespace, policy: RetryPolicy(maxAttempts: config.maxAttempts))
        let clock = ServerClock()
        self.clock = clock
        self.redis = redis
        let transport = try Self.makeTransport(config: config, redis: redis, metrics: metrics, clock: clock)
        let gateway = TransportPushGateway(transport: transport, transportName: config.pushTransport.rawValue,
                                           concurrency: config.pushConcurrency, metrics: metrics, logger: logger)
        let payloads = try PushPayloadBuilder(settings: PayloadSettings(
            attributesType: config.flow.attributesType, deepLinkScheme: config.flow.deepLinkScheme,
            expireAfterSeconds: config.flow.expireAfterSeconds, endDismissAfterSeconds: config.flow.endDismissAfterSeconds))
        let context = FlowContext(database: database, push: gateway, payloads: payloads, settings: config.flow,
                                  transport: config.pushTransport, metrics: metrics, logger: logger,
                                  claimSeconds: config.jobLeaseSeconds * 2)
        let planner = JobPlanner(settings: config.flow)
        let reconcilerSession = PostgresSession(configuration: postgresConfiguration, name: "reconciler")
        let schemaVersion = Migration.all.map(\.version).max() ?? 0
        let readiness: @Sendable () async -> [String: String] = {
            var problems: [String: String] = [:]
            do {
                let applied = try await database.query("SELECT coalesce(max(version), 0) AS v FROM countdown_schema_migrations")
                    .first?.decode("v", as: Int.self) ?? 0
                if applied < schemaVersion {
                    problems["schema"] = "database is at version \(applied), this worker needs \(schemaVersion): run countdown-admin migrate"
                }
            } catch {
                problems["postgres"] = "\(error)"
            }
            do { _ = try await redis.command(["PING"]) } catch { problems["redis"] = "\(error)" }
            metrics.ready.set(problems.isEmpty ? 1 : 0)
            return problems
        }
        let grace = Duration.seconds(config.shutdownGraceSeconds)
        services = [
            HealthServer(address: config.httpAddress, metrics: metrics.registry, logger: logger, readiness: readiness),
            ClockSync(clock: clock, redis: redis, metrics: metrics, logger: logger),
            QueueStatsPoller(queue: queue, database: database, metrics: metrics, readiness: readiness),
            ReconcilerService(reconciler: Reconciler(session: reconcilerSession, queue: queue, planner: planner), redis: redis,
                              namespace: config.namespace, interval: .seconds(config.reconcileIntervalSeconds), metrics: metrics, logger: logger),
            OutboxRelay(configuration: postgresConfiguration, queue: queue, planner: planner, metrics: metrics, logger: logger),
            Dispatcher(queue: queue, handler: JobHandler(context: context), concurrency: config.workerConcurrency, lease: .seconds(config.jobLeaseSeconds),
                       drain: grace * 0.8, startBatchSize: config.startBatchSize, metrics: metrics, logger: logger),
        ]
        closers = [{ database.close() }, { reconcilerSession.close() }, { redis.close() }]
    }

    /// Runs until SIGTERM/SIGINT (or a service fails); returns the exit code.
    public func run() async -> Int32 {
        let shutdown = ShutdownSignal()
        let trap = SignalTrap { number in
            self.logger.info("shutting down", ["signal": .int(Int(number))])
            shutdown.trigger()
        }
        logger.info("worker starting", [
            "version": .string(CountdownVersion.current), "namespace": .string(config.namespace), "transport": .string(config.pushTransport.rawValue),
            "concurrency": .int(config.workerConcurrency), "http": .string(config.httpAddress),
        ])
        // Measured once before anything signs credentials; ClockSync keeps it current (and retries if Redis is away).
        try? await clock.sync(with: redis)
        let outcome = await ServiceGroup(services: services, grace: .seconds(config.shutdownGraceSeconds), logger: logger).run(shutdown: shutdown)
        for close in closers { close() }
        withExtendedLifetime(trap) {}
        logger.info("worker stopped", ["failed": .bool(outcome.failed), "in_time": .bool(outcome.stoppedInTime)])
        return outcome.failed ? 1 : 0
    }

    static func makeTransport(config: CountdownConfig, redis: RedisClient, metrics: WorkerMetrics, clock: ServerClock) throws -> any PushTransport {
        let http = { (name: String) throws -> HTTPClient in
            try HTTPClient(configuration: HTTPClientConfiguration(name: name, requestTimeout: .seconds(15),
                                                                  maxConnections: max(8, min(512, config.pushConcurrency))))
        }
        let base: any PushTransport
        switch config.pushTransport {
        case .log:
            return LogTransport()
        case .fcm:
            guard let fcm = config.fcm else { throw ConfigError(.missing, variable: "GOOGLE_APPLICATION_CREDENTIALS", problem: "is required for PUSH_TRANSPORT=fcm") }
            let account = try ServiceAccount.load(file: fcm.credentialsFile)
            let client = try http("fcm")
            let tokens = try FCMAccessTokenProvider(account: account, http: client, now: clock.now, onRefresh: { succeeded in
                metrics.tokenRefreshes.increment(labels: "fcm", succeeded ? "ok" : "error")
            })
            base = FCMTransport(projectID: fcm.projectID ?? account.projectID, baseURL: fcm.baseURL, tokens: tokens, http: client)
        case .apns:
            guard let apns = config.apns else { throw ConfigError(.missing, variable: "APNS_KEY_FILE", problem: "is required for PUSH_TRANSPORT=apns") }
            let tokens = try APNsProviderToken(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, now: clock.now, onRefresh: {
                metrics.tokenRefreshes.increment(labels: "apns", "ok")
            })
            let configuration = APNsConfiguration(keyFile: apns.keyFile, keyID: apns.keyID, teamID: apns.teamID, bundleID: apns.bundleID,
                                                  environment: apns.environment == .production ? .production : .development,
                                                  baseURLOverride: apns.baseURL)
            base = APNsTransport(configuration: configuration, tokens: tokens, http: try http("apns"))
        }
        let limiter = RedisRateLimiter(redis: redis, namespace: config.namespace, perMinute: config.pushRateLimitPerMinute)
        return RateLimitedTransport(base, limiter: CoalescingRateLimiter(limiter))
    }
}
