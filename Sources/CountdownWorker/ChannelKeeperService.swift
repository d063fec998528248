import CountdownFlows
import Foundation
import Lifecycle
import Redis
import Telemetry

/// Runs `ChannelKeeper` (SPEC 12.5) every `interval`, one worker of the fleet at a time: the one that takes the Redis
/// lock (`{ns}:broadcast:lock`, held a little less than an interval), as the pruner runs.
public final class ChannelKeeperService: PeriodicService {
    public let name = "channel-keeper"
    private let keeper: ChannelKeeper
    private let lock: FleetRunLock
    private let interval: Duration
    private let metrics: ChannelMetrics
    private let logger: Logger

    public init(keeper: ChannelKeeper, redis: RedisClient, namespace: String, interval: Duration = .seconds(30), metrics: ChannelMetrics,
                logger: Logger) {
        self.keeper = keeper
        lock = FleetRunLock(redis: redis, key: RedisKeys(namespace: namespace).broadcastLock, token: UUID().uuidString)
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "channel-keeper"])
    }

    public func runOnce() async -> Duration? {
        do {
            guard try await lock.acquire(forMilliseconds: FleetRunLock.milliseconds(forInterval: interval)) else { return interval }
            let report = try await keeper.run()
            metrics.alive.set(Double(report.alive))
            if report.deleted + report.orphansDeleted + report.retried > 0 {
                logger.info("broadcast channels kept", ["deleted": .int(report.deleted), "orphans_deleted": .int(report.orphansDeleted),
                                                        "created_on_retry": .int(report.retried), "alive": .int(report.alive)])
            }
        } catch {
            logger.warn("channel keeper round failed; the next interval tries again", ["error": .error(error)])
        }
        return interval
    }
}
