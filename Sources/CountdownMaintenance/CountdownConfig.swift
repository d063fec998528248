import Configuration
import CountdownDomain
import Foundation
import HTTPTypes
import Redis
import Telemetry

/// Everything the worker (and the admin command) reads from the environment, validated at start.
public struct CountdownConfig: Sendable {
    /// `REMINDER_TRANSPORT`: reminders are plain notifications and need FCM (with `PUSH_TRANSPORT=apns` too).
    public enum ReminderTransportKind: String, Sendable, CaseIterable { case fcm, off }
    public enum APNsEnvironment: String, Sendable, CaseIterable { case production, development }

    public struct FCM: Sendable {
        public var credentialsFile: String
        public var projectID: String?
        public var baseURL: String
    }

    public struct APNs: Sendable {
        public var keyFile: String
        public var keyID: String
        public var teamID: String
        public var bundleID: String
        public var environment: APNsEnvironment
        public var baseURL: String
        /// PEM CA certificates to trust for APNs instead of the system's (`APNS_CA_FILE`), e.g. a fake's test CA.
        public var caFile: String? = nil
    }

    public var databaseURL: String
    public var redisURL: String
    /// `REDIS_URL` with the TLS and Sentinel settings applied (see `RedisConfiguration(url:environment:)`).
    public var redis: RedisConfiguration
    public var namespace: String
    public var pushTransport: PushTransportKind
    public var reminderTransport: ReminderTransportKind = .fcm
    /// `ANDROID_COUNTDOWN`: whether Android devices get new countdown starts by FCM data message (SPEC 10.4); default
    /// off (the app must ship its renderer first); also `flow.androidCountdownEnabled`.
    public var androidCountdown: OnOff = .off
    public var fcm: FCM?
    public var apns: APNs?
    public var flow: FlowSettings
    public var workerConcurrency: Int
    /// Pooled PostgreSQL connections per worker (`DATABASE_POOL_SIZE`, default half of `workerConcurrency`, 4–32).
    public var databasePoolSize: Int
    /// Start jobs claimed together that share one fan-out (`START_BATCH_SIZE`).
    public var startBatchSize: Int
    public var pushConcurrency: Int
    public var pushRateLimitPerMinute: Int
    public var httpAddress: String
    /// Configured by `LOG_LEVEL` and `LOG_FORMAT`.
    public var logger: Logger
    public var shutdownGraceSeconds: Int
    public var reconcileIntervalSeconds: Int
    public var maxAttempts: Int
    /// How long a claimed job (and the start-ledger rows it claims) stays with a worker that stops answering.
    public var jobLeaseSeconds: Int
    /// Most start-ledger rows one start fan-out claims and sends at a time (a stream with more goes page by page).
    public var startPageSize: Int
    /// The token guard (`TOKEN_GUARD_MIN_REFUSALS`, `TOKEN_GUARD_RATIO`).
    public var tokenGuardMinRefusals: Int = 20
    public var tokenGuardRatio: Double = 0.2
    /// `statement_timeout` of every worker session (`DATABASE_STATEMENT_TIMEOUT_MS`, 0: none).
    public var statementTimeoutMilliseconds: Int = 30_000
    /// `lock_timeout` of every worker session (`DATABASE_LOCK_TIMEOUT_MS`, 0: none).
    public var lockTimeoutMilliseconds: Int = 5_000
    /// How long a worker keeps trying to reach Redis at start before it exits (`REDIS_STARTUP_WAIT_SECONDS`);
    /// a misconfiguration stops it at once (`RedisStartupCheck`).
    public var redisStartupWaitSeconds: Int = 60
    /// The fleet at its largest (`FLEET_MAX_WORKERS`, `FLEET_API_REPLICAS`, `FLEET_CONSOLE_REPLICAS`, the rollout surges
    /// `FLEET_*_SURGE`, `API_DATABASE_CONNECTIONS`), checked
    /// against the server's `max_connections` at start; nil without `FLEET_MAX_WORKERS`.
    public var fleet: ConnectionBudget?
    /// `REMINDER_ANDROID_CHANNEL_ID`: the Android notification channel of reminders (nil: the app's default).
    public var reminderAndroidChannelID: String?
    /// The forward proxy of the push services' requests, from libcurl's variables (`HTTPS_PROXY`, `NO_PROXY`, …),
    /// read and checked once at start.
    public var pushProxy: ProxySettings = .none
    /// The pruner's settings (`RETENTION_DAYS`, `AUDIT_RETENTION_DAYS`, `RETENTION_BATCH_ROWS`, `RETENTION_INTERVAL_SECONDS`).
    public var retention = RetentionSettings()
    /// Broadcast channels (`APNS_BROADCAST`, `APNS_CHANNEL_URL`, `APNS_BROADCAST_MAX_CHANNELS`; SPEC 12.5).
    public var broadcast = BroadcastSettings()

    /// Reads and validates every variable; throws all problems at once so an operator fixes them in one go.
    public static func load(from env: Environment = Environment(), requirePush: Bool = true) throws -> CountdownConfig {
        var problems: [ConfigError] = []
        func read<T>(_ body: () throws -> T, default fallback: T) -> T { ConfigProblems.reading(body, into: &problems) ?? fallback }
        let databaseURL = read({ try env.url("DATABASE_URL", schemes: ["postgres", "postgresql"]) }, default: "")
        let redisURL = read({ try env.url("REDIS_URL", schemes: ["redis", "rediss"]) }, default: "")
        let redis = redisURL.isEmpty ? RedisConfiguration(host: "") : read({ () throws -> RedisConfiguration in
            do throws(RedisError) { return try RedisConfiguration(url: redisURL, environment: env.values) } catch { throw ConfigError(.invalid, variable: error.context, problem: error.message) }
        }, default: RedisConfiguration(host: ""))
        let namespace = read({ () throws -> String in
            let value = try env.string("COUNTDOWN_NAMESPACE", default: "countdown")
            guard value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.:".contains($0) }), !value.contains("{"), value.count <= 64 else {
                throw ConfigError(.invalid, variable: "COUNTDOWN_NAMESPACE", problem: "may hold letters, digits, - _ . : (at most 64), got \"\(value)\"")
            }
            return value
        }, default: "countdown")
        let transport = read({ try env.choice("PUSH_TRANSPORT", default: PushTransportKind.fcm) }, default: .log)
        var fcm: FCM?
        var apns: APNs?
        let reminders = read({ try env.choice("REMINDER_TRANSPORT", default: ReminderTransportKind.fcm) }, default: .fcm)
        let android = read({ try env.choice("ANDROID_COUNTDOWN", default: OnOff.off) }, default: .off)
        if requirePush && transport == .apns && reminders == .fcm && env.optionalString("GOOGLE_APPLICATION_CREDENTIALS") == nil {
            problems.append(ConfigError(.missing, variable: "GOOGLE_APPLICATION_CREDENTIALS", problem:
                "is required for reminders with PUSH_TRANSPORT=apns (reminders go through FCM); set REMINDER_TRANSPORT=off to run without them"))
        } else if requirePush && transport == .apns && android == .on && env.optionalString("GOOGLE_APPLICATION_CREDENTIALS") == nil {
            problems.append(ConfigError(.missing, variable: "GOOGLE_APPLICATION_CREDENTIALS", problem:
                "is required for ANDROID_COUNTDOWN=on with PUSH_TRANSPORT=apns (the Android countdown goes through FCM)"))
        }
        let fcmBesideAPNs = (reminders == .fcm || android == .on) && env.optionalString("GOOGLE_APPLICATION_CREDENTIALS") != nil
        if requirePush && (transport == .fcm || (transport == .apns && fcmBesideAPNs)) {
            fcm = FCM(
                credentialsFile: read({ try env.file("GOOGLE_APPLICATION_CREDENTIALS") }, default: ""),
                projectID: env.optionalString("FCM_PROJECT_ID"),
                baseURL: read({ try env.url("FCM_BASE_URL", schemes: ["http", "https"], default: "https://fcm.googleapis.com") }, default: ""))
        }
        if requirePush && transport == .apns {
            let environment = read({ try env.choice("APNS_ENVIRONMENT", default: APNsEnvironment.production) }, default: .production)
            let defaultBase = environment == .production ? "https://api.push.apple.com" : "https://api.sandbox.push.apple.com"
            apns = APNs(
                keyFile: read({ try env.file("APNS_KEY_FILE") }, default: ""),
                keyID: read({ try env.string("APNS_KEY_ID") }, default: ""),
                teamID: read({ try env.string("APNS_TEAM_ID") }, default: ""),
                bundleID: read({ try env.string("APNS_BUNDLE_ID") }, default: ""),
                environment: environment,
                baseURL: read({ try env.url("APNS_BASE_URL", schemes: ["http", "https"], default: defaultBase) }, default: ""),
                caFile: read({ try env.optionalCertificateFile("APNS_CA_FILE") }, default: nil))
        }
        let day = 86_400
        let flow = FlowSettings(
            startLeadSeconds: read({ () throws -> Int in
                let lead = try env.integer("START_LEAD_SECONDS", default: 3600, range: 1...day)
                guard lead <= FlowSettings.maxStartLeadSeconds else {
                    throw ConfigError(.invalid, variable: "START_LEAD_SECONDS", problem: "must be at most \(FlowSettings.maxStartLeadSeconds) (7 hours): "
                                      + "iOS ends a Live Activity 8 hours after it started, so an earlier start could end before the stream; got \(lead)")
                }
                return lead
            }, default: 3600),
            reminderLeadSeconds: read({ try env.integer("REMINDER_LEAD_SECONDS", default: 600, range: 0...day) }, default: 600),
            expireAfterSeconds: read({ try env.integer("EXPIRE_AFTER_SECONDS", default: 3600, range: 1...(7 * day)) }, default: 3600),
            endDismissAfterSeconds: read({ try env.integer("END_DISMISS_AFTER_SECONDS", default: 900, range: 0...(4 * 3600)) }, default: 900),
            attributesType: read({ try env.string("LIVE_ACTIVITY_ATTRIBUTES_TYPE", default: "AllmineLiveActivityAttributes") }, default: ""),
            deepLinkScheme: read({ () throws -> String in
                let scheme = try env.string("DEEP_LINK_SCHEME", default: "allmine")
                guard let first = scheme.first, first.isLetter,
                      scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else {
                    throw ConfigError(.invalid, variable: "DEEP_LINK_SCHEME", problem: "must be a URL scheme like allmine, got \"\(scheme)\"")
                }
                return scheme
            }, default: "allmine"))
        let workerConcurrency = read({ try env.integer("WORKER_CONCURRENCY", default: 64, range: 1...4096) }, default: 64)
        let defaultPool = max(4, min(32, workerConcurrency / 2))
        let config = CountdownConfig(
            databaseURL: databaseURL,
            redisURL: redisURL,
            redis: redis,
            namespace: namespace,
            pushTransport: transport,
            fcm: fcm,
            apns: apns,
            flow: flow,
            workerConcurrency: workerConcurrency,
            databasePoolSize: read({ try env.integer("DATABASE_POOL_SIZE", default: defaultPool, range: 1...1024) }, default: defaultPool),
            startBatchSize: read({ try env.integer("START_BATCH_SIZE", default: 32, range: 1...256) }, default: 32),
            pushConcurrency: read({ try env.integer("PUSH_CONCURRENCY", default: 256, range: 1...4096) }, default: 256),
            pushRateLimitPerMinute: read({ try env.integer("PUSH_RATE_LIMIT_PER_MINUTE", default: 600_000, range: 1...100_000_000) }, default: 600_000),
            httpAddress: read({ try env.address("HTTP_ADDR", default: "0.0.0.0:9090") }, default: ""),
            logger: Logger(level: read({ try env.logLevel() }, default: .info), format: read({ try env.logFormat() }, default: .json)),
            shutdownGraceSeconds: read({ try env.integer("SHUTDOWN_GRACE_SECONDS", default: 25, range: 0...3600) }, default: 25),
            reconcileIntervalSeconds: read({ try env.integer("RECONCILE_INTERVAL_SECONDS", default: 300, range: 5...86_400) }, default: 300),
            maxAttempts: read({ try env.integer("JOB_MAX_ATTEMPTS", default: 10, range: 1...100) }, default: 10),
            jobLeaseSeconds: read({ try env.integer("JOB_LEASE_SECONDS", default: 30, range: 2...3600) }, default: 30),
            startPageSize: read({ try env.integer("START_PAGE_SIZE", default: 1000, range: 1...100_000) }, default: 1000))
        var configured = config
        configured.reminderTransport = reminders
        configured.flow.remindersEnabled = reminders == .fcm
        configured.androidCountdown = android
        configured.flow.androidCountdownEnabled = android == .on
        configured.tokenGuardMinRefusals = read({ try env.integer("TOKEN_GUARD_MIN_REFUSALS", default: 20, range: 1...1_000_000) }, default: 20)
        configured.tokenGuardRatio = read({ try env.fraction("TOKEN_GUARD_RATIO", default: 0.2, range: 0...1) }, default: 0.2)
        configured.statementTimeoutMilliseconds = read({ try env.integer("DATABASE_STATEMENT_TIMEOUT_MS", default: 30_000, range: 0...3_600_000) },
                                                       default: 30_000)
        configured.lockTimeoutMilliseconds = read({ try env.integer("DATABASE_LOCK_TIMEOUT_MS", default: 5_000, range: 0...3_600_000) }, default: 5_000)
        configured.redisStartupWaitSeconds = read({ try env.integer("REDIS_STARTUP_WAIT_SECONDS", default: 60, range: 0...3600) }, default: 60)
        configured.reminderAndroidChannelID = read({ try Self.androidChannelID(env) }, default: nil)
        configured.pushProxy = ProxySettings(environment: env.values)
        configured.retention = RetentionSettings.load(env, into: &problems)
        configured.broadcast = BroadcastSettings.load(env, transport: transport, environment: apns?.environment ?? .production, into: &problems)
        if env.optionalString("FLEET_MAX_WORKERS") != nil {
            let workers = read({ try env.integer("FLEET_MAX_WORKERS", default: 1, range: 1...10_000) }, default: 1)
            let api = read({ try env.integer("FLEET_API_REPLICAS", default: 0, range: 0...10_000) }, default: 0)
            let console = read({ try env.integer("FLEET_CONSOLE_REPLICAS", default: 1, range: 0...100) }, default: 1)
            configured.fleet = ConnectionBudget(
                maxWorkers: workers, workerPoolSize: configured.databasePoolSize, apiReplicas: api,
                apiPoolSize: read({ try env.integer("API_DATABASE_CONNECTIONS", default: 16, range: 1...256) }, default: 16),
                workerSurge: read({ try env.integer("FLEET_WORKER_SURGE", default: ConnectionBudget.defaultSurge(workers), range: 0...10_000) },
                                  default: 0),
                apiSurge: read({ try env.integer("FLEET_API_SURGE", default: ConnectionBudget.defaultSurge(api), range: 0...10_000) }, default: 0),
                consoleReplicas: console,
                consoleSurge: read({ try env.integer("FLEET_CONSOLE_SURGE", default: ConnectionBudget.defaultSurge(console), range: 0...100) },
                                   default: 0),
                poolerMaxClients: env.optionalString("FLEET_POOLER_MAX_CLIENTS") == nil ? nil
                    : read({ try env.integer("FLEET_POOLER_MAX_CLIENTS", default: 0, range: 1...1_000_000) }, default: nil))
        }
        if !problems.isEmpty { throw ConfigProblems(problems: problems) }
        return configured
    }

    /// `REMINDER_ANDROID_CHANNEL_ID`: unset or a channel id of at most 255 bytes without control characters.
    static func androidChannelID(_ env: Environment) throws -> String? {
        guard let value = env.optionalString("REMINDER_ANDROID_CHANNEL_ID") else { return nil }
        guard value.utf8.count <= 255, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ConfigError(.invalid, variable: "REMINDER_ANDROID_CHANNEL_ID",
                              problem: "must be an Android notification channel id (at most 255 bytes, no control characters)")
        }
        return value
    }
}
