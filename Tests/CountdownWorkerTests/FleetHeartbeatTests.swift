import CountdownWorker
import DelayQueue
import Foundation
import Lifecycle
import Redis
import Telemetry
import Testing
import TestSupport

/// Worker liveness through Redis: a silent worker is dead after the ttl, its queue leases are handed back by a
/// survivor, a worker Redis never heard of is unknown, and a leaving worker is dead at once.
@Suite struct FleetHeartbeatTests {
    static func heartbeat(_ id: String, _ redis: RedisClient, _ namespace: String, _ queue: any DelayQueue,
                          leases: @escaping @Sendable () -> [JobLease] = { [] }, metrics: WorkerMetrics = WorkerMetrics()) -> FleetHeartbeat {
        FleetHeartbeat(id: id, redis: redis, namespace: namespace, queue: queue, leases: leases, ttl: .milliseconds(400),
                       interval: .milliseconds(100), metrics: metrics, logger: Logger(level: .error, sink: CapturingLogSink()))
    }

    static func eventually(within limit: Duration = .seconds(10), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    @Test func aSilentWorkersLeasesAreHandedBackAndItsClaimsCountAsDead() async throws {
        let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
        defer { redis.close() }
        let namespace = TestEnvironment.uniqueName("fleet")
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        try await queue.enqueue(NewJob(id: "start:s", kind: "start", due: .now))
        guard case .job(let claimed)? = try await queue.claim(max: 1, lease: .seconds(60)).items.first else {
            Issue.record("the job is claimed")
            return
        }
        let doomed = Self.heartbeat("doomed", redis, namespace, queue, leases: { [claimed.lease] })
        try await doomed.beat()

        let metrics = WorkerMetrics()
        let survivor = Self.heartbeat("survivor", redis, namespace, queue, metrics: metrics)
        let shutdown = ShutdownSignal()
        let running = Task { try await survivor.run(shutdown: shutdown) }
        // The survivor judges once its own heartbeats went through for longer than the ttl; meanwhile the doomed
        // worker keeps beating and is alive.
        #expect(try await Self.eventually {
            try await doomed.beat()
            return await survivor.classify(["never-heard-of"]) == ([], [])
        })
        #expect(await survivor.classify(["doomed"]) == ([], ["doomed"]))

        // The doomed worker stops beating (killed): within the ttl and a sweep its job is due again.
        let killed = ContinuousClock.now
        #expect(try await Self.eventually {
            if case .job(let again)? = try await queue.claim(max: 1, lease: .seconds(60)).items.first { return again.id == "start:s" }
            return false
        })
        let takeover = ContinuousClock.now - killed
        #expect(takeover < .seconds(2), "taken over after \(takeover)")
        #expect(await survivor.classify(["doomed", "survivor", "never-heard-of"]) == (["doomed"], ["survivor"]))
        // Counted after the leases are handed back, so the job may be claimed again a moment before.
        #expect(try await Self.eventually { metrics.takeovers.value() == 1 })

        // A worker that leaves is dead at once.
        shutdown.trigger()
        try await running.value
        let other = Self.heartbeat("other", redis, namespace, queue)
        #expect(try await Self.eventually {
            try await other.beat()
            return await other.classify(["never-heard-of"]) == ([], [])
        })
        #expect(await other.classify(["survivor"]) == (["survivor"], []))
    }
}
