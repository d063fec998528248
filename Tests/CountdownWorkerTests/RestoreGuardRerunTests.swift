import CountdownMaintenance
import CountdownStore
import Foundation
import Postgres
import Redis
import Testing
import TestSupport

/// docs/runbooks.md: a restore guard interrupted mid-run (a crash, SIGKILL) is run again with the same `--since`.
/// The guard commits a page of streams at a time, then the reminders, then lifts the trip; a process killed after
/// its first page leaves that page recorded and the rest not. Run again, it records the rest, and what a clean run
/// would have; a third run writes nothing.
@Suite struct RestoreGuardRerunTests {
    @Test func anInterruptedGuardRunAgainEndsAsOneCleanRun() async throws {
        try await TestDatabase.withFresh(prefix: "guardrerun") { _, client in
            _ = try await Migrator().migrate(client)
            let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
            defer { redis.close() }
            let namespace = TestEnvironment.uniqueName("guardrerun")
            let watermark = LedgerWatermark(redis: redis, namespace: namespace)
            // 250 streams in their start window (three pages), each with a creator, an eligible iOS device and an
            // active reminder due; the database is five minutes behind the fleet's watermark (tripped).
            let streams = 250
            _ = try await client.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, $1) i", [streams])
            _ = try await client.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                SELECT 'd' || i, 'u' || i, 'ios', 'fcm-d' || i, md5('pts' || i) FROM generate_series(1, $1) i
                """, [streams])
            _ = try await client.execute("""
                INSERT INTO streams (id, title, planned_start_at) SELECT 's' || i, 'S', now() + interval '5 minutes' FROM generate_series(1, $1) i
                """, [streams])
            _ = try await client.execute("""
                INSERT INTO stream_participants (stream_id, user_id, role) SELECT 's' || i, 'u' || i, 'creator' FROM generate_series(1, $1) i
                """, [streams])
            _ = try await client.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 's' || i, 'u' || i FROM generate_series(1, $1) i",
                                         [streams])
            _ = try await client.execute("UPDATE countdown_ledger_clock SET newest = now() - interval '5 minutes'")
            _ = try await watermark.check(postgresNewest: Date(), record: "")
            _ = try await watermark.check(postgresNewest: Date().addingTimeInterval(-300), record: "the database went back in time")
            #expect(try await watermark.read().tripped)

            // What a guard killed after its first page leaves: 100 streams' starts recorded, nothing else.
            let firstPage = (1...100).map { StartLedger.Key(stream: "s\($0)", user: "u\($0)", device: "d\($0)") }
            _ = try await client.transaction { try StartLedger.assumeSent(firstPage, on: $0) }
            #expect(try await watermark.read().tripped, "an interrupted guard has not lifted the trip")

            let guardian = RestoreGuard(database: StoreClient(client), watermark: watermark, settings: .init(), transport: .fcm)
            let since = TimeCutoff.ago(seconds: 600)
            let again = try await guardian.run(since: since)
            #expect(again.streams == streams)
            #expect(again.startsAssumed == streams - firstPage.count, "the rest of the starts, each once")
            #expect(again.remindersAssumed == streams)
            #expect(try await Self.count("countdown_start_ledger WHERE status = 'assumed_sent' AND reason = 'restored'", client) == streams)
            #expect(try await Self.count("countdown_start_ledger", client) == streams)
            #expect(try await Self.count("stream_reminders WHERE status = 'sent'", client) == streams)
            #expect(try await watermark.read().tripped == false, "the trip is lifted")
            let clock = try await client.withConnection { try RestoreGuardQueries.ledgerClock(on: $0) }
            #expect(abs(clock.newest.timeIntervalSince(clock.now)) < 5, "the ledger clock is now")

            // Once more: nothing left to record, nothing changes.
            let third = try await guardian.run(since: since)
            #expect(third.startsAssumed == 0 && third.remindersAssumed == 0)
            #expect(try await Self.count("countdown_start_ledger", client) == streams)
            try await watermark.clear()
        }
    }

    static func count(_ from: String, _ client: PostgresClient) async throws -> Int {
        try await client.query("SELECT count(*) AS n FROM \(from)")[0].decode("n", as: Int.self)
    }
}
