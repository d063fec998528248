import Configuration
import CountdownMaintenance
import CountdownDomain
import CountdownStore
import DelayQueue
import Postgres
import Redis

/// The database, Redis and queue handles a short-lived command opens from the environment.
public struct AdminConnections: Sendable {
    public let config: CountdownConfig
    public let database: PostgresClient
    public let redis: RedisClient
    public let queue: RedisDelayQueue

    public init(environment: Environment = Environment()) throws {
        config = try CountdownConfig.load(from: environment, requirePush: false)
        database = PostgresClient(configuration: try PostgresConfiguration(url: config.databaseURL), maxConnections: 2)
        redis = RedisClient(configuration: config.redis, poolSize: 2)
        queue = RedisDelayQueue(client: redis, namespace: config.namespace, policy: RetryPolicy(maxAttempts: config.maxAttempts))
    }

    public var planner: JobPlanner { JobPlanner(settings: config.flow) }

    /// The store seams on `database` (the operator's reports and actions).
    public var store: StoreClient { StoreClient(database) }

    public func close() {
        database.close()
        redis.close()
    }
}
