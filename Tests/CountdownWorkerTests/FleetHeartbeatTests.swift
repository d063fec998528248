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
                          leases: @escaping @Sendable () -> [JobLease] = { [] }, claimedThrough: @escaping @Sendable () -> Int = { 0 },
                          metrics: WorkerMetrics = WorkerMetrics()) -> FleetHeartbeat {
        FleetHeartbeat(id: id, redis: redis, namespace: namespace, queue: queue, leases: leases, claimedThrough: claimedThrough,
                       ttl: .milliseconds(400), interval: .milliseconds(100), metrics: metrics,
                       logger: Logger(level: .error, sink: CapturingLogSink()))
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

    /// A worker killed between a claim and the beat that publishes its leases: the claim itself logged them, so
    /// the takeover hands the job back within the ttl, not at its lease expiry (60 s here).
    @Test func aWorkerKilledBeforeItPublishedAClaimHasTheJobHandedBack() async throws {
        let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
        defer { redis.close() }
        let namespace = TestEnvironment.uniqueName("fleet")
        let queue = RedisDelayQueue(client: redis, namespace: namespace)
        defer { queue.close() }
        let doomedQueue = RedisDelayQueue(client: redis, namespace: namespace,
                                          claimLog: RedisKeys(namespace: namespace).fleetClaims(worker: "doomed"))
        defer { doomedQueue.close() }
        let doomed = Self.heartbeat("doomed", redis, namespace, doomedQueue)
        let survivor = Self.heartbeat("survivor", redis, namespace, queue)
        let shutdown = ShutdownSignal()
        let running = Task { try await survivor.run(shutdown: shutdown) }
        defer { shutdown.trigger() }
        #expect(try await Self.eventually {
            try await doomed.beat()
            return await survivor.classify(["never-heard-of"]) == ([], [])
        })

        try await queue.enqueue(NewJob(id: "start:killed-after-claim", kind: "start", due: .now))
        guard case .job(let claimed)? = try await doomedQueue.claim(max: 1, lease: .seconds(60)).items.first else {
            Issue.record("the doomed worker claims the job")
            return
        }
        let killed = ContinuousClock.now
        var again: ClaimedJob?
        #expect(try await Self.eventually {
            if case .job(let job)? = try await queue.claim(max: 1, lease: .seconds(60)).items.first { again = job }
            return again != nil
        })
        #expect(again?.id == claimed.id)
        let takeover = ContinuousClock.now - killed
        #expect(takeover < .seconds(3), "handed back after \(takeover)")
        // The survivor drops the claim log after it has handed the job back, so the claim above can come first.
        #expect(try await Self.eventually {
            try await redis.command(["EXISTS", RedisArgument(RedisKeys(namespace: namespace).fleetClaims(worker: "doomed"))]).integer == 0
        }, "the dead worker's claim log is gone after the takeover")
        shutdown.trigger()
        try await running.value
    }

    /// The claim log holds only what the last beat did not publish: a beat covering the claim's token drops it.
    @Test func aBeatDropsTheClaimLogItsLeasesCover() async throws {
        let redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
        defer { redis.close() }
        let namespace = TestEnvironment.uniqueName("fleet")
        let logKey = RedisArgument(RedisKeys(namespace: namespace).fleetClaims(worker: "w"))
        let queue = RedisDelayQueue(client: redis, namespace: namespace, claimLog: RedisKeys(namespace: namespace).fleetClaims(worker: "w"))
        defer { queue.close() }
        try await queue.enqueue([NewJob(id: "start:a", kind: "start", due: .now), NewJob(id: "start:b", kind: "start", due: .now)])
        let first = try await queue.claim(max: 1, lease: .seconds(60)).items
        let second = try await queue.claim(max: 1, lease: .seconds(60)).items
        guard case .job(let a)? = first.first, case .job(let b)? = second.first else {
            Issue.record("both jobs are claimed")
            return
        }
        let entries = try await redis.command(["ZRANGE", logKey, "0", "-1"]).array?.compactMap(\.string)
        #expect(entries == ["1|\(a.lease.token)|\(a.id)", "1|\(b.lease.token)|\(b.id)"])

        let through = Int(a.lease.token) ?? 0
        let beat = Self.heartbeat("w", redis, namespace, queue, leases: { [a.lease] }, claimedThrough: { through })
        try await beat.beat()
        let left = try await redis.command(["ZRANGE", logKey, "0", "-1"]).array?.compactMap(\.string)
        #expect(left == ["1|\(b.lease.token)|\(b.id)"])
        await beat.finish()
        #expect(try await redis.command(["EXISTS", logKey]).integer == 0, "a leaving worker's log goes with its leases")
    }
}
