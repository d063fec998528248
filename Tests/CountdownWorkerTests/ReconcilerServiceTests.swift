import BlockingIO
import CountdownDomain
@testable import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import DelayQueue
import Foundation
@testable import Lifecycle
import Postgres
import Redis
import Telemetry
import Testing
import TestSupport

/// When the reconciler runs: at start, every interval, and at once after a Redis failover.
@Suite struct ReconcilerServiceTests {
    /// A failover may lose the jobs the old primary had not replicated; the next run must not wait for the interval
    /// (an hour here), and it must not be held back by the interval's lock, which the new primary may still hold.
    @Test func aFailoverStartsARunAtOnceDespiteTheIntervalLock() async throws {
        try await TestDatabase.withFresh(prefix: "failover") { database, client in
            _ = try await Migrator().migrate(client)
            _ = try await client.withConnection {
                try $0.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s-1', 'One', now() + interval '2 hours')")
                try $0.execute("DELETE FROM countdown_outbox")
            }
            let queue = InMemoryDelayQueue()
            let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 1)
            defer { redis.close() }
            let namespace = TestEnvironment.uniqueName("reconcile")
            let failovers = Locked(0)
            let session = PostgresSession(configuration: database.configuration)
            defer { session.close() }
            let service = ReconcilerService(
                reconciler: Reconciler(session: session, queue: queue, planner: JobPlanner(settings: FlowSettings(startLeadSeconds: 3600))),
                redis: redis, namespace: namespace, interval: .seconds(3600), metrics: WorkerMetrics(),
                logger: Logger(level: .error, sink: CapturingLogSink()), failovers: { failovers.value })
            let startJob = CountdownJob.streamJobID(.start, stream: "s-1")
            let shutdown = ShutdownSignal()
            let running = Task { try await service.run(shutdown: shutdown) }

            try await waitUntil(timeout: .seconds(10), "the first run to queue the start job") { try await queue.jobs(ids: [startJob])[startJob] != nil }
            // Lost with the old primary; the interval's lock (held for the hour) came over with the replica.
            #expect(try await queue.cancel([startJob]) == 1)
            failovers.withLock { $0 += 1 }
            try await waitUntil(timeout: .seconds(10), "a run right after the failover") { try await queue.jobs(ids: [startJob])[startJob] != nil }

            shutdown.trigger()
            try await running.value
            _ = try await redis.command("DEL", RedisArgument("{\(namespace)}:reconcile:lock"), RedisArgument("{\(namespace)}:reconcile:failover-lock"))
        }
    }
}
