import BlockingIO
import Lifecycle
import Redis
import Telemetry

/// Keeps the worker's `ServerClock` measured against Redis `TIME` and exports the offset, warning when the
/// host clock is far off (NTP broken): decisions stay correct, but operators should know.
public final class ClockSync: PeriodicService {
    public let name = "clock-sync"
    /// Offsets beyond this are logged as a warning.
    public static let warnAbove = 2.0
    private let clock: ServerClock
    private let redis: RedisClient
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let interval: Duration
    private let warned = Locked(false)

    public init(clock: ServerClock, redis: RedisClient, metrics: WorkerMetrics, logger: Logger, interval: Duration = .seconds(30)) {
        self.clock = clock
        self.redis = redis
        self.metrics = metrics
        self.logger = logger
        self.interval = interval
    }

    public func runOnce() async -> Duration? {
        do {
            try await clock.sync(with: redis)
            let offset = clock.offsetSeconds
            metrics.clockOffset.set(offset)
            let far = abs(offset) > Self.warnAbove
            if far && !warned.value {
                logger.warn("host clock is off; signing credentials with the Redis server's time", ["offset_seconds": .double(offset)])
            }
            warned.withLock { $0 = far }
        } catch {
            logger.debug("clock sync failed", ["error": .error(error)])
        }
        return interval
    }
}
