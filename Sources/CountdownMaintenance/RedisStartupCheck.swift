import Foundation
import Lifecycle
import Redis
import Telemetry

/// The worker's first contact with Redis, before any service runs.
///
/// A failure that says the configuration is wrong — a certificate not trusted, a master name the Sentinels do not
/// know, credentials refused (`RedisError.misconfigured`) — stops the worker at once with one line naming the
/// setting: trying again cannot help, and an orchestrator shows a crash at once where a worker that stays up
/// unready is easy to miss. Redis that cannot be reached yet (connection refused, timeouts, Sentinels away, a
/// failover in progress) is tried again every `retryEvery` for `window`, as a restarting Redis or a failover
/// would be; only then does the worker stop, naming where it looked (`REDIS_SENTINELS` or `REDIS_URL`).
public struct RedisStartupCheck: Sendable {
    public enum Outcome: Sendable, Equatable {
        case reached
        /// The setting to correct and one line saying why.
        case misconfigured(setting: String, line: String)
        /// Nothing answered within the window; the setting that says where Redis was looked for.
        case unreachable(setting: String, line: String)
        /// `stop` tripped while Redis was being waited for.
        case stopped
    }

    let redis: RedisClient
    let window: Duration
    let retryEvery: Duration
    let logger: Logger
    let stop: ShutdownSignal

    /// - Parameter stop: ends the wait between two attempts (an attempt in progress runs to its own timeout).
    public init(redis: RedisClient, window: Duration, retryEvery: Duration = .seconds(1), logger: Logger, stop: ShutdownSignal = ShutdownSignal()) {
        self.redis = redis
        self.window = window
        self.retryEvery = retryEvery
        self.logger = logger
        self.stop = stop
    }

    /// One line for a failure to reach Redis, led by the setting to check when it says the configuration is wrong
    /// (for logs and /readyz).
    public static func line(for error: any Error) -> String {
        guard let error = error as? RedisError, let setting = error.misconfigured else { return "\(error)" }
        return "Redis refused the configuration, check \(setting): \(error)"
    }

    public func run() async -> Outcome {
        let started = ContinuousClock.now
        var failures = 0
        while true {
            do {
                _ = try await redis.command(["PING"])
                if failures > 0 {
                    logger.info("Redis reached", ["attempts": .int(failures + 1), "waited_s": .seconds(ContinuousClock.now - started)])
                }
                return .reached
            } catch let error as RedisError where error.misconfigured != nil {
                return .misconfigured(setting: error.misconfigured ?? "", line: Self.line(for: error))
            } catch {
                failures += 1
                let waited = ContinuousClock.now - started
                if waited >= window {
                    let setting = redis.configuration.sentinel == nil ? "REDIS_URL" : "REDIS_SENTINELS"
                    return .unreachable(setting: setting, line: "Redis not reachable for \(waited.components.seconds)s, check \(setting): \(error)")
                }
                logger.warn("Redis not reachable at start; trying again", [
                    "error": .error(error), "attempt": .int(failures), "gives_up_in_s": .seconds(window - waited),
                ])
                if await stop.sleep(for: retryEvery) { return .stopped }
            }
        }
    }
}
