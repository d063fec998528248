import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import Foundation
import Postgres
import Redis
import Telemetry
import Testing
import TestSupport

/// SPEC 12.4: the fleet tells that PostgreSQL went back in time (its newest ledger time more than 60 s behind the
/// watermark the workers keep in Redis) and holds starts, backfills and reminders until the guard runs; a normal
/// restart must not trip it.
@Suite struct LedgerWatermarkTests {
    func service(_ client: PostgresClient, _ redis: RedisClient, _ namespace: String, worker: String = "w1") -> LedgerWatermarkService {
        LedgerWatermarkService(database: StoreClient(client), watermark: LedgerWatermark(redis: redis, namespace: namespace), workerID: worker,
                               metrics: WorkerMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
    }

    @Test func aNormalRestartDoesNotTripIt() async throws {
        try await TestDatabase.withFresh(prefix: "watermark") { _, client in
            _ = try await Migrator().migrate(client)
            let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
            defer { redis.close() }
            let namespace = TestEnvironment.uniqueName("watermark")
            let first = service(client, redis, namespace)
            #expect(first.heldKinds == LedgerWatermark.heldKinds, "held until the first check")
            _ = await first.runOnce()
            #expect(first.heldKinds.isEmpty && first.problem == nil)
            // Ledger writes move the clock (at most every 5 s); the worker carries it to Redis.
            _ = try await client.execute("UPDATE countdown_ledger_clock SET newest = now() - interval '10 minutes'")
            _ = try await client.execute("INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) VALUES ('s', 'u', 'd', 'skipped')")
            let moved = try await client.withConnection { try RestoreGuardQueries.ledgerClock(on: $0) }
            #expect(abs(moved.newest.timeIntervalSince(moved.now)) < 2, "a ledger write moved the clock to now")
            _ = await first.runOnce()
            // A restart (a new process, the same database and Redis): not tripped.
            let restarted = service(client, redis, namespace, worker: "w2")
            _ = await restarted.runOnce()
            #expect(restarted.heldKinds.isEmpty && restarted.problem == nil)
            _ = try await redis.command("DEL", RedisArgument("{\(namespace)}:fleet:ledger-watermark"))
        }
    }

    @Test func aRestoreTripsItUntilTheGuardRuns() async throws {
        try await TestDatabase.withFresh(prefix: "watermark") { _, client in
            _ = try await Migrator().migrate(client)
            let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
            defer { redis.close() }
            let namespace = TestEnvironment.uniqueName("watermark")
            let worker = service(client, redis, namespace)
            _ = await worker.runOnce()
            // The database goes back: its ledger clock is that of a backup taken five minutes ago.
            _ = try await client.execute("UPDATE countdown_ledger_clock SET newest = now() - interval '5 minutes'")
            _ = await worker.runOnce()
            #expect(worker.heldKinds == ["start", "backfill_device", "backfill_user", "reminder", "reminder_page"])
            #expect(worker.problem?.contains("restore-guard") == true, "\(worker.problem ?? "")")
            // Every worker holds, also one that starts now; a ledger write (a claim extended, an update) does not lift it.
            _ = try await client.execute("INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) VALUES ('s', 'u', 'd', 'skipped')")
            let other = service(client, redis, namespace, worker: "w2")
            _ = await other.runOnce()
            _ = await worker.runOnce()
            #expect(!other.heldKinds.isEmpty && !worker.heldKinds.isEmpty)
            // The guard (or --none) lifts it.
            let guardian = RestoreGuard(database: StoreClient(client), watermark: LedgerWatermark(redis: redis, namespace: namespace),
                                        settings: .init(), transport: .fcm)
            try await guardian.clear()
            _ = await worker.runOnce()
            _ = await other.runOnce()
            #expect(worker.heldKinds.isEmpty && other.heldKinds.isEmpty && worker.problem == nil)
            try await LedgerWatermark(redis: redis, namespace: namespace).clear()
        }
    }
}
