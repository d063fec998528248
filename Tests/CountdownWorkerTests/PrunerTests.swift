import BlockingIO
import CountdownDomain
@testable import CountdownMaintenance
import CountdownStore
import DelayQueue
@testable import CountdownWorker
import Foundation
import Postgres
import Redis
import Telemetry
import Testing
import TestSupport

/// SPEC 12.3: the pruner deletes only Countdown's own rows that have aged out, never a scheduled stream's rows nor
/// the backend's, in batches; one worker of the fleet runs it per interval.
@Suite struct PrunerTests {
    /// Every table the pruner empties, and the backend's, by name.
    static let streamTables = RetentionQueries.StreamTable.all.map(\.name)
    static let backendTables = ["streams", "users", "devices", "stream_participants", "stream_reminders"]

    @Test func deletesOnlyWhatHasAgedOutAndNeverAScheduledStreamsRows() async throws {
        try await TestDatabase.withFresh(prefix: "pruner") { _, client in
            _ = try await Migrator().migrate(client)
            try await client.withConnection { connection in
                // Ended 40 days ago: its rows go. Ended 10 days ago: they stay. Ended 40 days ago and scheduled again:
                // they stay. Never ended: they stay.
                try Self.seedStream("old", endedDaysAgo: 40, on: connection)
                try Self.seedStream("recent", endedDaysAgo: 10, on: connection)
                try Self.seedStream("revived", endedDaysAgo: 40, on: connection)
                try connection.execute("UPDATE streams SET status = 'scheduled' WHERE id = 'revived'")
                try Self.seedStream("live", endedDaysAgo: nil, on: connection)
                try connection.execute("""
                    INSERT INTO countdown_audit (at, actor, role, action, outcome)
                    VALUES (now() - interval '400 days', 'a', 'admin-cli', 'cancel', 'done'), (now() - interval '300 days', 'a', 'admin-cli', 'cancel', 'done')
                    """)
                try connection.execute("""
                    INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, invalidated_at)
                    VALUES ('old-d1', 'fcm', 'tok-a', 'UNREGISTERED', now() - interval '31 days'),
                           ('old-d1', 'fcm', 'tok-b', 'UNREGISTERED', now() - interval '29 days')
                    """)
                // Channels Apple listed unnamed: one noted 31 days ago (the keeper stopped looking), one yesterday.
                try connection.execute("""
                    INSERT INTO countdown_broadcast_orphans (channel_id, first_seen_at)
                    VALUES ('orphan-old', now() - interval '31 days'), ('orphan-recent', now() - interval '1 day')
                    """)
            }
            let before = try await Self.counts(client)
            let store = StoreClient(client)
            let pruner = Pruner(store: store, settings: RetentionSettings(days: 30, auditDays: 365, batchRows: 2))
            let due = try await pruner.preview()
            #expect(due["countdown_start_ledger"] == 3 && due["countdown_audit"] == 1 && due["countdown_token_invalidations"] == 1, "\(due)")
            #expect(due["countdown_broadcast_channels"] == 1 && due["countdown_broadcast_orphans"] == 1, "\(due)")

            let heard = Locked([String: Int]())
            let report = try await pruner.run { table, rows in heard.withLock { $0[table, default: 0] += rows } }
            #expect(report.streams == 1)
            #expect(report.deleted == heard.withLock { $0 })
            #expect(report.deleted == due.filter { $0.value > 0 }, "the preview said what the run deleted")

            let after = try await Self.counts(client)
            for table in Self.streamTables {
                #expect(after[table]?["old"] == 0, "\(table) keeps rows of the stream that aged out")
                for stream in ["recent", "revived", "live"] {
                    // A stream that never left scheduled has no countdown_stream_ends row yet.
                    let seeded = table == "countdown_stream_ends" && stream == "live" ? 0 : 1
                    #expect(after[table]?[stream] == before[table]?[stream] && (before[table]?[stream] ?? 0) >= seeded, "\(table) lost rows of \(stream)")
                }
            }
            for table in Self.backendTables { #expect(after[table] == before[table], "the backend's \(table) changed") }
            #expect(try await Self.count("countdown_audit", client) == 1)
            #expect(try await Self.count("countdown_token_invalidations", client) == 1)
            // The aged-out stream's channel row went (its deletion at Apple never finished); the others' stay.
            #expect(try await Self.count("countdown_broadcast_channels WHERE stream_id = 'old'", client) == 0)
            #expect(try await Self.count("countdown_broadcast_channels", client) == 3)
            #expect(try await Self.count("countdown_broadcast_orphans WHERE channel_id = 'orphan-recent'", client) == 1)
            #expect(try await Self.count("countdown_broadcast_orphans", client) == 1)
            // The pruner's own record of the stream went with its rows: a row per ended stream does not pile up.
            #expect(try await Self.count("countdown_stream_ends", client) == 2)

            // Nothing more is due: a second run deletes nothing; the ages are those of what is left.
            #expect(try await pruner.run().total == 0)
            let ages = try await pruner.oldestAges()
            #expect(abs((ages["countdown_start_ledger"] ?? 0) - 10 * 86_400) < 60, "the recent stream is the oldest left: \(ages)")
            #expect(abs((ages["countdown_audit"] ?? 0) - 300 * 86_400) < 60)

            // Ended again after coming back, it goes (counted from when it first left scheduled).
            _ = try await client.withConnection { try $0.execute("UPDATE streams SET status = 'expired' WHERE id = 'revived'") }
            #expect(try await pruner.run().streams == 1)
            #expect(try await Self.counts(client)["countdown_start_ledger"]?["revived"] == 0)
            #expect(try await Self.counts(client)["countdown_stream_ends"]?["revived"] == 0)

            // Brought back and ended once more after that: a new record with a new clock, not due for 30 days.
            _ = try await client.withConnection { try $0.execute("UPDATE streams SET status = 'scheduled' WHERE id = 'revived'") }
            _ = try await client.withConnection { try $0.execute("UPDATE streams SET status = 'started' WHERE id = 'revived'") }
            #expect(try await Self.count("countdown_stream_ends WHERE stream_id = 'revived' AND left_scheduled_at > now() - interval '1 minute'", client) == 1)
            #expect(try await pruner.run().streams == 0)
        }
    }

    /// The fleet runs it once per interval: of two workers, the one that takes the lock runs; the other skips.
    @Test func oneWorkerOfTheFleetRunsPerInterval() async throws {
        try await TestDatabase.withFresh(prefix: "prunerlock") { _, client in
            _ = try await Migrator().migrate(client)
            let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
            defer { redis.close() }
            let namespace = TestEnvironment.uniqueName("retention")
            let pruner = Pruner(store: StoreClient(client), settings: RetentionSettings(days: 30, batchRows: 10))
            let services = (0..<2).map { _ in
                PrunerService(pruner: pruner, queue: InMemoryDelayQueue(), redis: redis, namespace: namespace, interval: .seconds(3600), metrics: WorkerMetrics(),
                              logger: Logger(level: .error, sink: CapturingLogSink()))
            }
            _ = try await client.withConnection { try Self.seedStream("first", endedDaysAgo: 40, on: $0) }
            #expect(await services[0].runOnce() == .seconds(3600))
            #expect(try await Self.counts(client)["countdown_start_ledger"]?["first"] == 0)
            _ = try await client.withConnection { try Self.seedStream("second", endedDaysAgo: 40, on: $0) }
            _ = await services[1].runOnce()
            #expect(try await Self.counts(client)["countdown_start_ledger"]?["second"] == 3, "the second worker ran within the interval")
            _ = try await redis.command("DEL", RedisArgument("{\(namespace)}:retention:lock"))
            _ = await services[1].runOnce()
            #expect(try await Self.counts(client)["countdown_start_ledger"]?["second"] == 0, "the next interval runs")
        }
    }

    /// A stream `id` with three devices of its creator and a row in every table the pruner empties; ended (cancelled)
    /// `endedDaysAgo` days ago, or still scheduled when nil.
    static func seedStream(_ id: String, endedDaysAgo: Int?, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO users (id, display_name) VALUES ($1, 'User')", ["\(id)-u"])
        try connection.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
            SELECT $1 || '-d' || i, $2, 'ios', 'fcm-' || $1 || i, 'pts-' || $1 || i FROM generate_series(1, 3) i
            """, [id, "\(id)-u"])
        try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'Stream', now() + interval '1 day')", [id])
        try connection.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = $1", [id])
        try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, $2, 'creator')", [id, "\(id)-u"])
        try connection.execute("INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ($1, $2, 'sent')", [id, "\(id)-u"])
        let devices = "SELECT device_id FROM devices WHERE user_id = $2"
        try connection.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) SELECT $1, $2, device_id, 'sent' FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_reminder_deliveries (stream_id, device_id, user_id, status) SELECT $1, device_id, $2, 'sent' FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            WITH claim AS (
                INSERT INTO countdown_reminder_claims (stream_id, planned_start, first_user, last_user, claimed_until)
                VALUES ($1, now() + interval '1 day', $2, $2, now()) RETURNING id)
            INSERT INTO countdown_reminder_sends (claim_id, stream_id, devices)
            SELECT claim.id, $1, ARRAY(SELECT device_id FROM devices WHERE user_id = $2) FROM claim
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_session_deliveries (stream_id, device_id, channel, token, shown_start_at)
            SELECT $1, device_id, 'live_activity', 'la-' || device_id, now() FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) SELECT $1, device_id, $2, 'la-' || device_id
            FROM (\(devices)) d
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_activity_sessions (stream_id, device_id, activity_id, user_id, live_activity_token)
            SELECT $1, device_id, 'older-' || device_id, $2, 'la-older-' || device_id FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, reason) SELECT $1, device_id, 'old-' || device_id, 'takeover'
            FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_end_attempts (stream_id, device_id, last_reason) SELECT $1, device_id, 'timeout' FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("""
            INSERT INTO countdown_undeliverable_ends (stream_id, device_id, live_activity_token, reason, attempts, first_failed_at)
            SELECT $1, device_id, 'la-' || device_id, 'timeout', 3, now() FROM devices WHERE user_id = $2
            """, [id, "\(id)-u"])
        try connection.execute("INSERT INTO countdown_stream_progress (stream_id) VALUES ($1) ON CONFLICT DO NOTHING", [id])
        // Its broadcast channel, retired and waiting for a deletion at Apple that never went through.
        try connection.execute("""
            INSERT INTO countdown_broadcast_channels (stream_id, state, channel_id, ended_at, delete_after)
            VALUES ($1, 'deleting', 'channel-' || $1::text, now(), now())
            """, [id])
        guard let endedDaysAgo else { return }
        try connection.execute("UPDATE streams SET status = 'cancelled' WHERE id = $1", [id])
        try connection.execute("UPDATE countdown_stream_ends SET left_scheduled_at = now() - make_interval(days => $2::int) WHERE stream_id = $1",
                               [id, endedDaysAgo])
    }

    /// Rows per stream of every table the pruner empties (by stream id), and of the backend's (by "all").
    static func counts(_ client: PostgresClient) async throws -> [String: [String: Int]] {
        try await client.withConnection { connection in
            var counts: [String: [String: Int]] = [:]
            for table in streamTables {
                for row in try connection.query("SELECT stream_id, count(*) AS n FROM \(table) GROUP BY stream_id") {
                    counts[table, default: [:]][try row.decode("stream_id", as: String.self)] = try row.decode("n", as: Int.self)
                }
                for stream in ["old", "recent", "revived", "live", "first", "second"] where counts[table]?[stream] == nil {
                    counts[table, default: [:]][stream] = 0
                }
            }
            for table in backendTables {
                counts[table] = ["all": try connection.query("SELECT count(*) AS n FROM \(table)")[0].decode("n", as: Int.self)]
            }
            return counts
        }
    }

    static func count(_ tableAndCondition: String, _ client: PostgresClient) async throws -> Int {
        try await client.withConnection { try $0.query("SELECT count(*) AS n FROM \(tableAndCondition)")[0].decode("n", as: Int.self) }
    }
}
