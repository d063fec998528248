import CountdownStore
import Lifecycle
import Postgres
import Telemetry

/// The API's maintenance step for anonymous registrations: a device registered without a user (before a login)
/// that never got one is deleted once it has not been written for `ttlSeconds` (`API_OWNERLESS_DEVICE_TTL_HOURS`).
/// Such a device receives nothing (starts and reminders go to users' devices); if the app registers it again it
/// is simply created again. Devices that had a user once are kept (migration 30 marks them).
///
/// Every replica sweeps; the batches lock with `SKIP LOCKED`, so replicas and writers never wait for each other,
/// and the cut-off is PostgreSQL's clock. A service of the API process's group: it sweeps at once, then every
/// `interval`; a failed sweep is logged and tried again then.
public struct OwnerlessDeviceSweeper: PeriodicService {
    public let name = "ownerless-device-sweeper"
    public static let defaultTTLHours = 720
    /// Rows deleted per statement, and statements per sweep at most.
    public static let batchSize = 1000
    public static let maxBatches = 100

    let database: PostgresClient
    let ttlSeconds: Int
    let metrics: APIMetrics
    let logger: Logger
    let interval: Duration

    public init(database: PostgresClient, ttlHours: Int, metrics: APIMetrics, logger: Logger, interval: Duration = .seconds(600)) {
        self.database = database
        ttlSeconds = ttlHours * 3600
        self.metrics = metrics
        self.logger = logger
        self.interval = interval
    }

    /// Deletes expired devices in batches; returns how many.
    public func sweepOnce() async throws -> Int {
        var total = 0
        for _ in 0..<Self.maxBatches {
            let deleted = try await database.withConnection { [ttlSeconds] connection in
                try DeviceOwnershipQueries.expireOwnerless(unwrittenFor: ttlSeconds, limit: Self.batchSize, on: connection)
            }
            total += deleted
            if deleted < Self.batchSize { break }
        }
        if total > 0 {
            metrics.ownerlessDevicesExpired.increment(by: UInt64(total))
            logger.info("ownerless devices expired", ["count": .int(total), "ttlHours": .int(ttlSeconds / 3600)])
        }
        return total
    }

    public func runOnce() async -> Duration? {
        do {
            _ = try await sweepOnce()
        } catch {
            logger.warn("ownerless device sweep failed", ["error": .error(error)])
        }
        return interval
    }
}
