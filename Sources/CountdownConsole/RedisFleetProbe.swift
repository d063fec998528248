import CountdownMaintenance
import Foundation
import PushGuard
import Redis

/// A worker known to the fleet and how long ago it last beat.
public struct WorkerHeartbeat: Sendable, Equatable, Codable {
    public var id: String
    public var heartbeatAgeSeconds: Double
    public var alive: Bool
}

/// The token guard's last 60 s, fleet-wide.
public struct TokenGuardState: Sendable, Equatable, Codable {
    public var sends: Int
    public var refusals: Int
    public var tripped: Bool
    public var minRefusals: Int
    public var ratio: Double
}

/// What the fleet page reads besides the queue and PostgreSQL, kept in Redis by the workers: the heartbeats
/// (`{ns}:fleet:workers`, scored by Redis time in ms), the token guard's window (`{ns}:push:tokenguard`) and the restore
/// guard's record. Tests leave it out.
public struct RedisFleetProbe: Sendable {
    let redis: RedisClient
    let namespace: String
    let guardRule: TokenGuard
    /// How long a silent worker counts as alive (the heartbeat's ttl).
    let aliveFor: Double

    public init(redis: RedisClient, namespace: String, guardRule: TokenGuard, aliveForSeconds: Double = 3) {
        self.redis = redis
        self.namespace = namespace
        self.guardRule = guardRule
        aliveFor = aliveForSeconds
    }

    /// The workers and their heartbeat ages by Redis's clock; a malformed `TIME` reply is thrown (`unexpectedReply`).
    public func workers() async throws -> [WorkerHeartbeat] {
        let now = try await redis.command("TIME").serverTime().timeIntervalSince1970 * 1000
        let reply = try await redis.command("ZRANGE", RedisArgument(RedisKeys(namespace: namespace).fleetWorkers), "0", "-1", "WITHSCORES")
        let items = reply.array?.compactMap(\.string) ?? []
        var workers: [WorkerHeartbeat] = []
        var index = 0
        while index + 1 < items.count {
            // The score is the beat's time, or a time in the past for a worker that left.
            let age = max(0, (now - (Double(items[index + 1]) ?? 0)) / 1000)
            workers.append(WorkerHeartbeat(id: items[index], heartbeatAgeSeconds: (age * 10).rounded() / 10, alive: age <= aliveFor))
            index += 2
        }
        return workers.sorted { ($0.alive ? 0 : 1, $0.id) < ($1.alive ? 0 : 1, $1.id) }
    }

    public func tokenGuard() async throws -> TokenGuardState {
        let counts = try await RedisTokenGuardWindow(redis: redis, namespace: namespace).record(sends: 0, refusals: 0)
        return TokenGuardState(sends: counts.sends, refusals: counts.refusals, tripped: guardRule.isTripped(counts),
                               minRefusals: guardRule.minRefusals, ratio: guardRule.ratio)
    }

    /// The restore guard's record while the fleet holds starts after the database went back in time (nil: not
    /// tripped): `{ns}:fleet:restore-guard` (`LedgerWatermark`).
    public func restoreGuard() async throws -> String? {
        let verdict = try await LedgerWatermark(redis: redis, namespace: namespace).read()
        return verdict.tripped ? (verdict.record ?? "tripped") : nil
    }
}
