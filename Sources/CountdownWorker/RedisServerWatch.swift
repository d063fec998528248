import BlockingIO
import Lifecycle
import Redis
import Telemetry

/// Notices that the Redis server behind `REDIS_URL` changed — restarted, or replaced by a failover no Sentinel
/// announced (a managed service behind one DNS name) — by its `run_id` (`INFO server`), read every `interval`.
/// The reconciler counts each change as a failover and runs at once: what the old server had not kept (jobs
/// queued just before, acknowledgements) is rebuilt within seconds, not at the next `RECONCILE_INTERVAL_SECONDS`.
/// A server that refuses `INFO` (an ACL user without it, a renamed command) turns the watch off with one log line.
/// Changes closer together than `minimumGap` count once: a setup whose address leads to several servers in turn (a
/// proxy over independent servers, which the queue does not support anyway) must not reconcile the fleet nonstop.
public final class RedisServerWatch: PeriodicService {
    public let name = "redis-server-watch"
    private struct State {
        var runID: String?
        var changes = 0
        var lastCounted: ContinuousClock.Instant?
    }

    private let redis: RedisClient
    private let interval: Duration
    private let minimumGap: Duration
    private let logger: Logger
    private let state = Locked(State())

    public init(redis: RedisClient, interval: Duration = .seconds(5), minimumGap: Duration = .seconds(60), logger: Logger) {
        self.redis = redis
        self.interval = interval
        self.minimumGap = minimumGap
        self.logger = logger.with(["component": "redis_watch"])
    }

    /// How many times the server changed since the first reading.
    public var changes: Int { state.withLock { $0.changes } }

    public func runOnce() async -> Duration? {
        await check() ? interval : nil
    }

    /// Reads the server's `run_id` once; false when the server refuses `INFO` (the watch stops).
    func check() async -> Bool {
        let reply: RedisReply
        do {
            // A pipeline of one: a refusal comes back as an `.error` reply to tell from a connection that failed.
            guard let first = try await redis.pipeline([["INFO", "server"]]).first else { return true }
            reply = first
        } catch {
            return true  // away for now: the next reading, on whichever server answers, tells
        }
        if case .error(let message) = reply {
            // LOADING, BUSY and the like pass; a refusal stays.
            guard message.hasPrefix("NOPERM") || message.localizedCaseInsensitiveContains("unknown command") else { return true }
            stop(because: message)
            return false
        }
        guard let text = reply.string, let runID = Self.runID(inInfo: text) else {
            stop(because: "INFO server names no run_id")
            return false
        }
        let now = ContinuousClock.now
        let reading = state.withLock { state -> Reading in
            defer { state.runID = runID }
            guard let previous = state.runID, previous != runID else { return .same }
            if let last = state.lastCounted, now - last < minimumGap { return .withinGap(previous: previous) }
            state.changes += 1
            state.lastCounted = now
            return .counted(previous: previous)
        }
        switch reading {
        case .same:
            break
        case .counted(let previous):
            logger.warn("Redis server changed (restarted or failed over): reconciling now", fields(previous, runID))
        case .withinGap(let previous):
            logger.warn("Redis server changed again within \(minimumGap.components.seconds) s: left to the reconciler's interval "
                        + "(does REDIS_URL lead to more than one server?)", fields(previous, runID))
        }
        return true
    }

    private enum Reading {
        case same
        case counted(previous: String)
        case withinGap(previous: String)
    }

    private func fields(_ previous: String, _ current: String) -> [String: LogValue] {
        ["previous_run_id": .string(String(previous.prefix(12))), "run_id": .string(String(current.prefix(12)))]
    }

    private func stop(because reason: String) {
        logger.info("cannot tell when the Redis server changes, so after a restart or a failover without Sentinel the "
                    + "reconciler runs only at RECONCILE_INTERVAL_SECONDS; allow INFO to the worker's Redis user to reconcile at once",
                    ["reason": .string(String(reason.prefix(200)))])
    }

    /// The `run_id` field of an `INFO server` reply (`run_id:<40 hex>` on a line of its own).
    static func runID(inInfo text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("run_id:") {
            let value = line.dropFirst("run_id:".count).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return nil
    }
}
