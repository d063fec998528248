import Foundation
import Redis

/// The fleet's memory of the start ledger's time (SPEC 12.4), in Redis: `{ns}:fleet:ledger-watermark` holds the newest
/// ledger time any worker saw PostgreSQL commit (epoch milliseconds, only ever moved forward), and
/// `{ns}:fleet:restore-guard` records that PostgreSQL was found more than `tolerance` behind it (the database went
/// back in time: a restore, or a failover to a replica that lagged). While that record exists every worker holds
/// back starts, backfills and reminders; `countdown-admin restore-guard` removes both keys once it has recorded what
/// the backup lost (or, with `--none`, without recording anything).
public struct LedgerWatermark: Sendable {
    /// How far PostgreSQL's newest ledger time may lag the watermark before the fleet stops (clock steps and the
    /// ledger clock's own 5 s granularity stay well inside it).
    public static let tolerance: TimeInterval = 60

    /// The kinds held back while tripped: those that send starts and reminders again.
    public static let heldKinds: Set<String> = ["start", "backfill_device", "backfill_user", "reminder", "reminder_page"]

    /// What a check found.
    public struct Verdict: Sendable, Equatable {
        /// The fleet holds back: PostgreSQL was found behind the watermark (now or earlier), until the guard runs.
        public var tripped: Bool
        /// The watermark (nil: none yet).
        public var watermark: Date?
        /// The record of the trip, as the worker that found it wrote it.
        public var record: String?
    }

    /// Compares PostgreSQL's newest ledger time with the watermark and, unless tripped, moves the watermark forward;
    /// trips the fleet (atomically, in the script) when PostgreSQL lags by more than the tolerance.
    static let check = RedisScript(name: "ledger.watermark.v1", source: """
        local record = redis.call('GET', KEYS[2])
        local mark = tonumber(redis.call('GET', KEYS[1]) or '')
        if record then return {1, tostring(mark or ''), record} end
        local newest = tonumber(ARGV[1])
        if mark and newest < mark - tonumber(ARGV[2]) then
            redis.call('SET', KEYS[2], ARGV[3])
            return {1, tostring(mark), ARGV[3]}
        end
        if not mark or newest > mark then redis.call('SET', KEYS[1], ARGV[1]) end
        return {0, tostring(math.max(mark or newest, newest)), ''}
        """)

    public let redis: RedisClient
    public let watermarkKey: String
    public let recordKey: String

    public init(redis: RedisClient, namespace: String) {
        self.redis = redis
        watermarkKey = RedisKeys(namespace: namespace).ledgerWatermark
        recordKey = RedisKeys(namespace: namespace).restoreGuard
    }

    /// One check: `newest` is PostgreSQL's newest ledger time; `record` describes a trip, written if this check trips.
    public func check(postgresNewest newest: Date, record: String) async throws -> Verdict {
        let reply = try await redis.run(script: Self.check, keys: [RedisArgument(watermarkKey), RedisArgument(recordKey)], args: [
            RedisArgument(Int64((newest.timeIntervalSince1970 * 1000).rounded(.down))), RedisArgument(Int64(Self.tolerance * 1000)),
            RedisArgument(record),
        ])
        let parts = reply.array ?? []
        let tripped = parts.first?.integer == 1
        let mark = parts.count > 1 ? parts[1].string.flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) } : nil
        let text = parts.count > 2 ? parts[2].string.flatMap { $0.isEmpty ? nil : $0 } : nil
        return Verdict(tripped: tripped, watermark: mark, record: text)
    }

    /// The watermark and the trip record as they are, changing nothing (the console, the guard's report).
    public func read() async throws -> Verdict {
        let replies = try await redis.pipeline([["GET", RedisArgument(watermarkKey)], ["GET", RedisArgument(recordKey)]])
        let mark = replies.first?.string.flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) }
        let record = replies.count > 1 ? replies[1].string : nil
        return Verdict(tripped: record != nil, watermark: mark, record: record)
    }

    /// Forgets the watermark and the trip: the next check starts from PostgreSQL's clock as it is.
    public func clear() async throws {
        _ = try await redis.command(["DEL", RedisArgument(watermarkKey), RedisArgument(recordKey)])
    }
}
