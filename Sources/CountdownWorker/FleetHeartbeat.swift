import BlockingIO
import CountdownFlows
import DelayQueue
import Foundation
import JSON
import Lifecycle
import Redis
import Telemetry

/// Makes this worker's liveness visible to the fleet and takes over the work of dead workers.
///
/// Every second the worker records in Redis (by Redis `TIME`) that it lives, with the queue leases its dispatcher
/// holds. A worker not heard from for `ttl` is dead: any worker that notices hands its leases back to the queue
/// (due at once, no attempt spent), and start-ledger rows and session end claims it held are taken over by the
/// next claim. A worker Redis has never heard of (a flushed Redis) is neither dead nor alive: its claims expire
/// by time. Ids are unique per process, so a dead worker never comes back. A worker judges others only after its
/// own heartbeats have gone through for longer than the ttl: after a Redis outage every worker was silent, and
/// none must take the others for dead before they could beat again.
public final class FleetHeartbeat: PeriodicService, WorkerLiveness {
    public let name = "heartbeat"
    public var workerID: String? { id }
    private let id: String
    private let redis: RedisClient
    private let queue: any DelayQueue
    private let leases: @Sendable () -> [JobLease]
    private let claimedThrough: @Sendable () -> Int
    private let namespace: String
    private let membersKey: String
    private let ttl: Duration
    private let interval: Duration
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let beatingSince = Locked<ContinuousClock.Instant?>(nil)

    /// - Parameters:
    ///   - leases: the queue leases this worker holds now (the dispatcher's).
    ///   - claimedThrough: the token of the latest claim whose leases `leases` covers (the dispatcher's
    ///     `claimedThrough`); the queue's claim log (`claimLogKey`) up to it is dropped at each beat.
    ///   - ttl: how long a silent worker counts as alive.
    public init(id: String, redis: RedisClient, namespace: String, queue: any DelayQueue, leases: @escaping @Sendable () -> [JobLease],
                claimedThrough: @escaping @Sendable () -> Int = { 0 },
                ttl: Duration = .seconds(3), interval: Duration = .seconds(1), metrics: WorkerMetrics, logger: Logger) {
        self.id = id
        self.redis = redis
        self.queue = queue
        self.leases = leases
        self.claimedThrough = claimedThrough
        self.namespace = namespace
        membersKey = RedisKeys(namespace: namespace).fleetWorkers
        self.ttl = ttl
        self.interval = interval
        self.metrics = metrics
        self.logger = logger.with(["component": "heartbeat", "worker": .string(id)])
    }

    /// A fresh id for this process: host, pid and a random part.
    public static func makeID() -> String {
        let host = ProcessInfo.processInfo.hostName.prefix(40)
        return "\(host)-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    public func runOnce() async -> Duration? {
        do {
            try await beat()
            if judges { try await takeOverDeadWorkers() }
        } catch {
            beatingSince.withLock { $0 = nil }
            logger.warn("heartbeat failed", ["error": .error(error)])
        }
        return interval
    }

    /// The worker's keys: the members, its leases, and its claim log (the `claimLog` of its `RedisDelayQueue`, so a
    /// worker killed between a claim and its next beat has its jobs handed back by the takeover too, not at their
    /// lease expiry).
    private func keys(of worker: String) -> [RedisArgument] {
        let keys = RedisKeys(namespace: namespace)
        return [RedisArgument(membersKey), RedisArgument(keys.fleetLeases(worker: worker)), RedisArgument(keys.fleetClaims(worker: worker))]
    }

    /// Leaving: the dispatcher handed its jobs back; whatever claims remain are taken over at once.
    public func finish() async {
        _ = try? await redis.run(script: Self.beatScript, keys: keys(of: id),
                                 args: [RedisArgument(id), "", RedisArgument(Int(ttl.wholeMilliseconds) + 1), "0"])
    }

    /// Records that this worker lives, with the leases it holds.
    public func beat() async throws {
        let through = claimedThrough()
        let encoded = Self.encode(leases())
        try await redis.run(script: Self.beatScript, keys: keys(of: id),
                            args: [RedisArgument(id), RedisArgument(encoded), "0", RedisArgument(through)]).throwIfError(context: "heartbeat")
        beatingSince.withLock { $0 = $0 ?? .now }
    }

    /// The leases as `[["id","token","attempt"],…]`, the shape `takeOverDeadWorkers` reads back. Written
    /// directly: a busy worker holds thousands of leases, and a generic encoder spent milliseconds on them each beat.
    static func encode(_ leases: [JobLease]) -> String {
        var json = JSONWriter(capacity: 64 + leases.count * 80)
        json.raw("[")
        for (index, lease) in leases.enumerated() {
            json.raw(index == 0 ? "[" : ",[")
            json.string(lease.id)
            json.raw(",")
            json.string(lease.token)
            json.raw(",")
            json.string(String(lease.attempt))
            json.raw("]")
        }
        json.raw("]")
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Whether this worker's heartbeats went through for longer than the ttl (one interval to spare).
    private var judges: Bool {
        guard let since = beatingSince.withLock({ $0 }) else { return false }
        return ContinuousClock.now - since > ttl + interval
    }

    /// Hands the leases of workers silent for longer than the ttl back to the queue and forgets those workers'
    /// leases (their ids stay known as dead for an hour, for the claims).
    func takeOverDeadWorkers() async throws {
        let reply = try await redis.run(script: Self.deadScript, keys: [RedisArgument(membersKey)],
                                        args: [RedisArgument(Int(ttl.wholeMilliseconds))]).throwIfError(context: "dead workers")
        for dead in reply.array?.compactMap(\.string) ?? [] where dead != id {
            let deadKeys = keys(of: dead)
            let stored = try await redis.command(["GET", deadKeys[1]]).throwIfError(context: "dead worker's leases")
            let logged = try await redis.command(["ZRANGE", deadKeys[2], "0", "-1"]).throwIfError(context: "dead worker's claim log")
            let fromLog = (logged.array ?? []).compactMap { $0.string.flatMap(Self.decodeClaimLogEntry) }
            guard !stored.isNull || !fromLog.isEmpty else { continue }  // taken over already
            var held: [JobLease] = []
            if let bytes = stored.bytes, let published = try? JSONDecoder().decode([[String]].self, from: Data(bytes)) {
                held = published.filter { $0.count == 3 }.map { JobLease(id: $0[0], token: $0[1], attempt: Int($0[2]) ?? 1) }
            }
            var seen = Set(held.map { "\($0.id)|\($0.token)" })
            held += fromLog.filter { seen.insert("\($0.id)|\($0.token)").inserted }
            var handedBack = 0
            for job in held {
                if try await queue.postpone(job, after: .zero, error: "worker \(dead) died holding the job") { handedBack += 1 }
            }
            _ = try await redis.command(["DEL", deadKeys[1], deadKeys[2]])
            metrics.takeovers.increment()
            logger.warn("took over a dead worker's jobs", ["dead_worker": .string(dead), "jobs": .int(handedBack)])
        }
    }

    public func classify(_ owners: [String]) async -> (dead: [String], alive: [String]) {
        guard !owners.isEmpty else { return ([], []) }
        guard judges else { return ([], owners) }
        do {
            let reply = try await redis.run(script: Self.classifyScript, keys: [RedisArgument(membersKey)],
                                            args: [RedisArgument(Int(ttl.wholeMilliseconds))] + owners.map { RedisArgument($0) })
                .throwIfError(context: "classify workers")
            var dead: [String] = []
            var alive: [String] = []
            for (owner, state) in zip(owners, reply.array ?? []) {
                switch state.integer {
                case 0: dead.append(owner)
                case 1: alive.append(owner)
                default: break
                }
            }
            return (dead, alive)
        } catch {
            logger.warn("could not read the fleet's liveness; every claim holder counts as alive", ["error": .error(error)])
            return ([], owners)
        }
    }

    /// A claim log entry, `attempt|token|id`.
    static func decodeClaimLogEntry(_ entry: String) -> JobLease? {
        let parts = entry.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let attempt = Int(parts[0]), !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        return JobLease(id: String(parts[2]), token: String(parts[1]), attempt: attempt)
    }

    /// KEYS: members (id → last heard, ms by Redis `TIME`), this worker's leases, its claim log. ARGV: id, leases
    /// (JSON; empty: leaving, delete them and the log), how many ms in the past to record (leaving: past the ttl,
    /// dead at once), the claim token the leases cover (the log up to it goes). Members silent for an hour are
    /// forgotten.
    static let beatScript = RedisScript(name: "fleet_beat", source: """
        \(RedisScript.nowMilliseconds)
        redis.call('ZADD', KEYS[1], now - tonumber(ARGV[3]), ARGV[1])
        if ARGV[2] == '' then
            redis.call('DEL', KEYS[2], KEYS[3])
        else
            redis.call('SET', KEYS[2], ARGV[2], 'PX', 3600000)
            if tonumber(ARGV[4]) > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[4]) end
        end
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
        return 1
        """)

    /// KEYS: members. ARGV: ttl (ms). The members silent for longer than the ttl.
    static let deadScript = RedisScript(name: "fleet_dead", source: """
        \(RedisScript.nowMilliseconds)
        return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
        """)

    /// KEYS: members. ARGV: ttl (ms), ids. Per id: 1 alive, 0 dead, -1 unknown.
    static let classifyScript = RedisScript(name: "fleet_classify", source: """
        \(RedisScript.nowMilliseconds)
        local out = {}
        for i = 2, #ARGV do
            local seen = redis.call('ZSCORE', KEYS[1], ARGV[i])
            if not seen then out[i - 1] = -1
            elseif now - tonumber(seen) > tonumber(ARGV[1]) then out[i - 1] = 0
            else out[i - 1] = 1 end
        end
        return out
        """)
}
