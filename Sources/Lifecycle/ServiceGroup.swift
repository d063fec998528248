import BlockingIO
import Foundation
import Telemetry

/// Runs services as children of one task group and stops them in reverse order, each within one shared grace
/// period.
///
/// Each service gets its own shutdown signal: the group trips them from the last started to the first, waiting
/// for each to return (or for the grace deadline) before tripping the next, so the dispatcher drains before the
/// relay and the health server stops last. A service that fails trips the whole group. Services still running at
/// the deadline are cancelled (cancellation reaches blocking PostgreSQL calls through `PQcancel`).
public struct ServiceGroup: Sendable {
    public let services: [any Service]
    public let grace: Duration
    public let logger: Logger

    public init(services: [any Service], grace: Duration, logger: Logger) {
        self.services = services
        self.grace = grace
        self.logger = logger
    }

    /// How a run ended.
    public struct Outcome: Sendable, Equatable {
        /// A service failed (rather than being asked to stop).
        public var failed: Bool
        /// Every service stopped within the grace period.
        public var stoppedInTime: Bool
    }

    /// Runs every service until `shutdown` trips or one fails; returns once every service has returned.
    public func run(shutdown: ShutdownSignal) async -> Outcome {
        let signals = services.map { _ in ShutdownSignal() }
        let finished = services.map { _ in ShutdownSignal() }
        let failed = Locked(false)
        return await withTaskGroup(of: Void.self, returning: Outcome.self) { group in
            for (index, service) in services.enumerated() {
                let signal = signals[index]
                let done = finished[index]
                group.addTask {
                    do {
                        try await service.run(shutdown: signal)
                    } catch {
                        if !signal.isTriggered {
                            logger.error("service failed", ["service": .string(service.name), "error": .error(error)])
                            failed.withLock { $0 = true }
                            shutdown.trigger()
                        }
                    }
                    done.trigger()
                }
            }
            await shutdown.wait()
            let deadline = ContinuousClock.now.advanced(by: grace)
            var inTime = true
            for (index, service) in services.enumerated().reversed() {
                signals[index].trigger()
                let remaining = deadline - ContinuousClock.now
                if remaining > .zero { await finished[index].sleep(for: remaining) }
                if finished[index].isTriggered {
                    logger.info("service stopped", ["service": .string(service.name)])
                } else {
                    inTime = false
                    logger.warn("service did not stop within the grace period; cancelling it", ["service": .string(service.name)])
                }
            }
            group.cancelAll()
            await group.waitForAll()
            return Outcome(failed: failed.value, stoppedInTime: inTime)
        }
    }
}
