import BlockingIO
import Configuration
import CountdownDomain
import CountdownFlows
import CountdownMaintenance
import CountdownStore
import DelayQueue
import Foundation
import HTTPClient
import JWT
import Lifecycle
import Postgres
import Push
import PushGuard
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
    private let heartbeat: FleetHeartbeat
    /// The restore detection: checked once before the services start, then every few seconds.
    private let watermark: LedgerWatermarkService
    /// Tripped by SIGTERM/SIGINT once `trapSignals()` ran: during the Redis startup wait as while running.
    private let shutdown = ShutdownSignal()
    /// Run once at start, beside the services (with `FLEET_MAX_WORKERS`).
    private let budgetCheck: ConnectionBudgetCheck?

    /// Opens clients lazily (nothing connects until a service runs) and builds the services in start order:
    /// health server, token guard ticker, clock sync, stats poller, heartbeat, Redis server watch, pause mirror, end
    /// recovery, claim keeper, reconciler, pruner, outbox relay, start settler, dispatcher (the last eight behind the
    /// schema gate). Stopping goes the other way: the dispatcher drains, the settler writes the outcomes of its jobs, and only
    /// then stop the claim keeper (which keeps their claims alive meanwhile) and the rest; the pools close last.
    public init(config: CountdownConfig, logger: Logger) throws {
        self.config = config
        self.logger = logger
        let metrics = WorkerMetrics()
        self.metrics = metrics
        let postgresConfiguration = try config.postgresConfiguration()
        let database = PostgresClient(configuration: postgresConfiguration, maxConnections: config.databasePoolSize)
        let store = StoreClient(database)
        budgetCheck = config.fleet.map { ConnectionBudgetCheck(fleet: $0, database: store, logger: logger, gauge: metrics.connectionBudget) }
        let redis = RedisClient(configuration: config.redis, poolSize: 8)
        let workerID = FleetHeartbeat.makeID()
        let queue = RedisDelayQueue(client: redis, namespace: config.namespace, policy: RetryPolicy(maxAttempts: config.maxAttempts),
                                    claimLog: RedisKeys(namespace: config.namespace).fleetClaims(worker: workerID))
        let clock = ServerClock()
        self.clock = clock
        self.redis = redis
        let (transport, tokenGuard) = try Self.makeTransport(config: config, redis: redis, metrics: metrics, clock: clock, logger: logger)
        let gateway = TransportPushGateway(transport: transport, transportName: config.pushTransport.rawValue,
                                           concurrency: config.pushConcurrency, metrics: metrics, logger: logger,
                                           notificationsShareEndService: config.pushTransport != .apns)
        let endRecovery = EndRecoveryWake(redis: redis, namespace: config.namespace, queue: queue, accepted: { gateway.acceptedByEndService },
                                          metrics: metrics, logger: logger)
        let payloads = try PushPayloadBuilder(settings: PayloadSettings(
            attributesType: config.flow.attributesType, deepLinkScheme: config.flow.deepLinkScheme,
            expireAfterSeconds: config.flow.expireAfterSeconds, endDismissAfterSeconds: config.flow.endDismissAfterSeconds,
            reminderAndroidChannelID: config.reminderAndroidChannelID))
        let leases = Locked<Dispatcher?>(nil)
        let heartbeat = FleetHeartbeat(id: workerID, redis: redis, namespace: config.namespace, queue: queue,
                                       leases: { leases.withLock { $0?.heldLeases ?? [] } },
                                       claimedThrough: { leases.withLock { $0?.claimedThrough ?? 0 } }, metrics: metrics, logger: logger)
        self.heartbeat = heartbeat
        let claimSeconds = config.jobLeaseSeconds * 2
        let settlerLogger = logger.with(["worker": .string(workerID)])
        // Answered starts keep their slots until written: a batch goes once half the slots wait on it, at the latest.
        let settler = StartSettler(store: store, logger: settlerLogger, metrics: metrics, fill: min(200, max(1, config.pushConcurrency / 2)))
        // Exported whatever APNS_BROADCAST says (dashboards read zeros rather than gaps).
        let channelMetrics = ChannelMetrics(registry: metrics.registry)
        let broadcast = try Self.makeBroadcast(config: config, store: store, redis: redis, metrics: metrics, channelMetrics: channelMetrics,
                                               clock: clock, logger: logger)
        let context = FlowContext(database: store, settler: settler, push: gateway, payloads: payloads, settings: config.flow,
                                  transport: config.pushTransport, metrics: metrics, logger: settlerLogger,
                                  claimSeconds: claimSeconds, liveness: heartbeat, startPageSize: config.startPageSize,
                                  endRecovery: endRecovery, broadcast: broadcast?.setup)
        let planner = JobPlanner(settings: config.flow)
        let reconcilerSession = PostgresSession(configuration: postgresConfiguration, name: "reconciler")
        let schemaVersion = Migration.all.map(\.version).max() ?? 0
        let appliedVersion: @Sendable () async throws -> Int = { try await Migrator.appliedVersion(database) }
        let gate = SchemaGate(requiredVersion: schemaVersion, logger: logger, appliedVersion: appliedVersion)
        let watermark = LedgerWatermarkService(database: store, watermark: LedgerWatermark(redis: redis, namespace: config.namespace),
                                               workerID: workerID, metrics: metrics, logger: logger)
        self.watermark = watermark
        let readiness: @Sendable () async -> [String: String] = {
            var problems: [String: String] = [:]
            do {
                let applied = try await appliedVersion()
                if applied < schemaVersion {
                    problems["schema"] = "database is at version \(applied), this worker needs \(schemaVersion): run countdown-admin migrate"
                }
            } catch {
                problems["postgres"] = "\(error)"
            }
            do { _ = try await redis.command(["PING"]) } catch { problems["redis"] = RedisStartupCheck.line(for: error) }
            if let restore = watermark.problem { problems["restore"] = restore }
            metrics.ready.set(problems.isEmpty ? 1 : 0)
            return problems
        }
        let grace = Duration.seconds(config.shutdownGraceSeconds)
        let dispatcher = Dispatcher(queue: queue, runner: FlowJobRunner(handler: JobHandler(context: context)), concurrency: config.workerConcurrency,
                                    lease: .seconds(config.jobLeaseSeconds), drain: grace * 0.8,
                                    batching: JobBatchPolicy(kinds: [CountdownJob.Kind.start.rawValue], size: config.startBatchSize),
                                    kindLimits: [CountdownJob.Kind.reminderPage.rawValue: Self.reminderPagesPerWorker],
                                    withheldKinds: { watermark.heldKinds },
                                    metrics: metrics, logger: logger,
                                    // The fleet learns of new leases at once, not at the next beat (which keeps the queue's
                                    // claim log short): the log covers only the moment between a claim and this beat.
                                    onClaimed: { try? await heartbeat.beat() })
        leases.withLock { $0 = dispatcher }
        let serverWatch = RedisServerWatch(redis: redis, logger: logger)
        var services: [any Service] = [
            HealthServer(address: config.httpAddress, metrics: metrics.registry, logger: logger, readiness: readiness),
            TokenGuardTicker(tokenGuard: tokenGuard),
            ClockSync(clock: clock, redis: redis, metrics: metrics, logger: logger),
            QueueStatsPoller(queue: queue, database: store, metrics: metrics, readiness: readiness),
            heartbeat,
            serverWatch,
            gate.guarding(PauseMirror(database: store, queue: queue, metrics: metrics, logger: logger)),
            gate.guarding(endRecovery),
            gate.guarding(ClaimKeeper.startLedger(owner: workerID, database: store, settler: settler, seconds: claimSeconds, metrics: metrics,
                                                  logger: logger)),
            gate.guarding(ReconcilerService(reconciler: Reconciler(session: reconcilerSession, queue: queue, planner: planner), redis: redis,
                                            namespace: config.namespace, interval: .seconds(config.reconcileIntervalSeconds), metrics: metrics,
                                            logger: logger, failovers: { redis.failoversSeen + serverWatch.changes })),
            gate.guarding(watermark),
            gate.guarding(PrunerService(pruner: Pruner(store: store, settings: config.retention), queue: queue, redis: redis, namespace: config.namespace,
                                        interval: .seconds(config.retention.intervalSeconds), metrics: metrics, logger: logger)),
            gate.guarding(OutboxRelay(configuration: postgresConfiguration, queue: queue, planner: planner, metrics: metrics, logger: logger)),
            // Stops right after the dispatcher drained: every outcome of its jobs is queued by then and written before
            // the claim keeper stops and the pools close.
            gate.guarding(settler),
            gate.guarding(dispatcher),
        ]
        // APNS_BROADCAST=on: the channels' upkeep (deletions, orphans, creation retries), before the relay.
        if let keeper = broadcast?.keeper, let relay = services.firstIndex(where: { $0.name == "outbox-relay" }) {
            services.insert(gate.guarding(keeper), at: relay)
        }
        self.services = services
        closers = [{ database.close() }, { reconcilerSession.close() }, { redis.close() }]
    }

    /// Reaches Redis before anything runs (`RedisStartupCheck`, `REDIS_STARTUP_WAIT_SECONDS`): `nil` when it answered,
    /// else the exit code after one error line naming the setting to check (2: a misconfiguration, 1: unreachable).
    /// A SIGTERM during the wait ends it: exit code 0 after a log line.
    public func checkRedisAtStart() async -> Int32? {
        let check = RedisStartupCheck(redis: redis, window: .seconds(config.redisStartupWaitSeconds), logger: logger, stop: shutdown)
        switch await check.run() {
        case .reached:
            return nil
        case .stopped:
            logger.info("worker stopped before Redis answered")
            return 0
        case .misconfigured(let setting, let line):
            logger.error(line, ["variable": .string(setting)])
            return 2
        case .unreachable(let setting, let line):
            logger.error(line, ["variable": .string(setting)])
            return 1
        }
    }

    /// Routes SIGTERM and SIGINT to this worker's shutdown from now on (before `checkRedisAtStart`, so a stop
    /// during the startup wait is graceful too); keep the trap for the life of the process.
    public func trapSignals() -> SignalTrap {
        SignalTrap { [logger, shutdown] number in
            logger.info("shutting down", ["signal": .int(Int(number))])
            shutdown.trigger()
        }
    }

    /// Runs until SIGTERM/SIGINT (or a service fails); returns the exit code.
    public func run() async -> Int32 {
        let shutdown = self.shutdown
        if shutdown.isTriggered {
            logger.info("worker stopped before it started")
            return 0
        }
        logger.info("worker starting", [
            "worker": .string(heartbeat.workerID ?? ""),
            "version": .string(BuildInfo.version), "namespace": .string(config.namespace), "transport": .string(config.pushTransport.rawValue),
            "concurrency": .int(config.workerConcurrency), "http": .string(config.httpAddress),
            "push_proxy": .string(config.pushProxy.summary),
        ])
        // Measured once before anything signs credentials; ClockSync keeps it current (and retries if Redis is away).
        try? await clock.sync(with: redis)
        // Heard of before it claims anything, so no other worker mistakes its first claims for a dead worker's.
        try? await heartbeat.beat()
        // Before the dispatcher claims: a database that went back in time holds starts from the first claim.
        _ = await watermark.runOnce()
        let grace = Duration.seconds(config.shutdownGraceSeconds)
        let stopped = DispatchSemaphore(value: 0)
        // Outside the group on purpose: it must act when the group itself does not return (cancelled after `run`).
        let watchdog = Task { [logger] in
            await shutdown.wait()
            guard !Task.isCancelled else { return }
            Self.exitUnlessStopped(stopped, within: grace + .seconds(10), logger: logger)
        }
        // Beside the services, so an unreachable server never delays the start (a one-shot check; cancelled after `run`).
        let budget = Task { [budgetCheck] in await budgetCheck?.run() }
        let outcome = await ServiceGroup(services: services, grace: grace, logger: logger).run(shutdown: shutdown)
        budget.cancel()
        stopped.signal()
        watchdog.cancel()
        for close in closers { close() }
        logger.info("worker stopped", ["failed": .bool(outcome.failed), "in_time": .bool(outcome.stoppedInTime)])
        return outcome.failed ? 1 : 0
    }

    /// Reminder pages one worker runs at once: each sends up to 2,000 pushes with `PUSH_CONCURRENCY` in flight, so a
    /// few keep a worker busy and leave the rest of a large fan-out to the other workers.
    static let reminderPagesPerWorker = 4

    /// The last resort of a shutdown: a service that ignored even cancellation must not keep the process alive
    /// (the orchestrator would wait for its kill timeout). Watches on a thread of its own.
    private static func exitUnlessStopped(_ stopped: DispatchSemaphore, within limit: Duration, logger: Logger) {
        Thread.detachNewThread {
            if stopped.wait(timeout: .now() + limit.timeInterval) == .timedOut {
                logger.error("services did not stop after cancellation; exiting", ["limit_s": .seconds(limit)])
                exit(1)
            }
        }
    }

    static func makeTransport(config: CountdownConfig, redis: RedisClient, metrics: WorkerMetrics, clock: ServerClock,
                              logger: Logger) throws -> (any PushTransport, TokenGuardedTransport) {
        let http = { (name: String, caFile: String?) throws -> HTTPClient in
            try HTTPClient(configuration: HTTPClientConfiguration(name: name, requestTimeout: .seconds(15),
                                                                  maxConnections: max(8, min(512, config.pushConcurrency)),
                                                                  caFile: caFile, proxy: config.pushProxy))
        }
        let base: any PushTransport
        switch config.pushTransport {
        case .log:
            base = LogTransport()
        case .fcm:
            guard let fcm = config.fcm else { throw ConfigError(.missing, variable: "GOOGLE_APPLICATION_CREDENTIALS", problem: "is required for PUSH_TRANSPORT=fcm") }
            base = try makeFCMTransport(fcm, http: try http("fcm", nil), metrics: metrics, clock: clock)
        case .apns:
            guard let apns = config.apns else { throw ConfigError(.missing, variable: "APNS_KEY_FILE", problem: "is required for PUSH_TRANSPORT=apns") }
            let (configuration, tokens) = try apnsCredentials(apns, redis: redis, namespace: config.namespace, metrics: metrics, clock: clock)
            let direct = APNsTransport(configuration: configuration, tokens: tokens, http: try http("apns", apns.caFile))
            // Reminders are plain notifications and the Android countdown FCM data messages: with REMINDER_TRANSPORT=fcm
            // or ANDROID_COUNTDOWN=on they go through FCM credentials.
            base = try config.fcm.map { RoutingTransport(liveActivities: direct, notifications: try makeFCMTransport($0, http: try http("fcm", nil), metrics: metrics, clock: clock)) } ?? direct
        }
        let limiter = RedisRateLimiter(redis: redis, namespace: config.namespace, perMinute: config.pushRateLimitPerMinute)
        let rule = TokenGuard(minRefusals: config.tokenGuardMinRefusals, ratio: config.tokenGuardRatio)
        let guarded = TokenGuardedTransport(base, rule: rule, window: RedisTokenGuardWindow(redis: redis, namespace: config.namespace),
                                            logger: logger) { tripped in metrics.tokenGuardTripped.set(tripped ? 1 : 0) }
        if config.pushTransport == .log { return (guarded, guarded) }
        return (RateLimitedTransport(guarded, limiter: limiter), guarded)
    }
}
