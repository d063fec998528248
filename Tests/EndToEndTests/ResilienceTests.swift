import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Redis
import Testing
import TestSupport

/// Crashes, lost Redis data and dead tokens: nothing lost, nothing repeated beyond what was in flight.
@Suite(.serialized) struct ResilienceTests {
    @Test func deadTokensAreClearedAndNeverRetried() async throws {
        let system = try await CountdownSystem()
        for user in ["creator", "guest"] { try await system.user(user) }
        try await system.device("creator-iphone", user: "creator")
        try await system.device("guest-iphone", user: "guest")
        try await system.fault(["token": CountdownSystem.fcmToken("guest-iphone"), "status": 404, "errorCode": "UNREGISTERED"])
        try system.startWorker()
        try await system.stream("s1", startsIn: 3, creator: "creator", guests: ["guest"])
        try await system.waitForPushes("the creator's start") { $0.events("start").count == 1 }
        try await waitUntil(timeout: .seconds(10), "dead token cleared") {
            let token: String? = try await system.query("SELECT fcm_token FROM devices WHERE device_id = 'guest-iphone'")[0].decode("fcm_token")
            return token == nil
        }
        let ledger: String = try await system.query("SELECT status || ':' || reason AS s FROM countdown_start_ledger WHERE device_id = 'guest-iphone'")[0].decode("s")
        #expect(ledger.hasPrefix("failed:dead_token"))
        let stats = try await system.fakeClient.call("GET", "/fake/stats")
        #expect((stats.json["rejected"] as? Int) == 1, "one attempt only: \(stats.text)")
        await system.stop()
    }

    @Test func oneStartPerDeviceWithThreeWorkersAndOneKilledMidBurst() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "120", "WORKER_CONCURRENCY": "16"])
        let streams = 2000
        try await system.burst(streams, startsIn: 124)
        try await system.fault(["latencyMs": 20])
        let workers = try (0..<3).map { _ in try system.startWorker() }
        try await system.waitForPushes(timeout: .seconds(30), "the burst to begin") { $0.count >= 100 }
        workers[1].kill9()
        _ = try await system.waitForPushes(timeout: .seconds(90), "every stream's start") { pushes in
            Set(pushes.events("start").map(\.fcmToken)).count == streams
        }
        // Rows the killed worker had claimed stay `sending` until their claim expires; the retry then settles
        // them (sending those pushes again), so the ledger is the thing to wait for, not the fake's inbox.
        try await waitUntil(timeout: .seconds(60), "every ledger row settled as sent") {
            try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE status = 'sent'")[0].decode("n", as: Int.self) == streams
        }
        let open: Int = try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE status <> 'sent'")[0].decode("n")
        #expect(open == 0)
        let pushes = try await system.pushes()
        #expect(Set(pushes.events("start").map(\.fcmToken)).count == streams)
        let duplicates = pushes.events("start").count - streams
        // Only what the killed worker had in flight can repeat: at most its concurrency.
        #expect(duplicates <= 16, "duplicated \(duplicates) starts")
        await system.stop()
    }

    @Test func lostRedisDataIsRebuiltByTheReconciler() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "6"])
        for user in ["creator"] { try await system.user(user) }
        try await system.device("creator-iphone", user: "creator")
        try await system.stream("future", startsIn: 12, creator: "creator")
        try await system.stream("later", startsIn: 3600, creator: "creator")
        let relay = try system.startWorker()
        try await waitUntil(timeout: .seconds(10), "jobs queued") {
            try await system.query("SELECT count(*) AS n FROM countdown_outbox")[0].decode("n", as: Int.self) == 0
        }
        relay.terminate()
        #expect(await relay.waitForExit(timeout: 10) == 0)
        // Lose every key of this system (a flush or a failover to an empty replica).
        _ = try await system.redis.command(["EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1", "0",
                                            RedisArgument("{\(system.namespace)}*")])
        let dry = try await system.admin(["reconcile", "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.output)")
        let report = try JSONSerialization.jsonObject(with: Data(dry.output.utf8)) as? [String: Any]
        #expect((report?["added"] as? [String: Int])?["start"] == 2)
        let real = try await system.admin(["reconcile"])
        #expect(real.status == 0 && real.output.contains("start=2"), "\(real.output)")
        try system.startWorker()
        let pushes = try await system.waitForPushes(timeout: .seconds(20), "the rebuilt start") { !$0.events("start", stream: "future").isEmpty }
        #expect(pushes.events("start", stream: "later").isEmpty)
        await system.stop()
    }
    /// Without Sentinel a restarted Redis that lost its data is noticed by its new `run_id` within seconds, and
    /// the reconciler rebuilds the queue at once rather than at `RECONCILE_INTERVAL_SECONDS` (an hour here).
    @Test func aRestartedRedisThatLostItsDataIsReconciledAtOnce() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "6", "RECONCILE_INTERVAL_SECONDS": "3600"])
        let server = try await ThrowawayRedis.start()
        try await system.user("creator")
        try await system.device("creator-iphone", user: "creator")
        try await system.stream("future", startsIn: 22, creator: "creator")
        let worker = try system.startWorker(["REDIS_URL": server.url])
        try await waitUntil(timeout: .seconds(15), "jobs queued and the startup reconcile done; log: \(worker.log)") {
            try await system.query("SELECT count(*) AS n FROM countdown_outbox")[0].decode("n", as: Int.self) == 0
                && (worker.log.contains("reconciler found the queue consistent") || worker.log.contains("reconciler repaired the queue"))
        }
        // Restarted without its data (no persistence, or a failover to an empty replica behind the same address).
        await server.stopInBackground()
        for leftover in ["appendonlydir", "appendonly.aof", "dump.rdb"] {
            try? FileManager.default.removeItem(atPath: (server.directory as NSString).appendingPathComponent(leftover))
        }
        try await server.startInBackground()
        try await waitUntil(timeout: .seconds(20), "the worker to notice the new server; log: \(worker.log)") {
            worker.log.contains("Redis server changed") && worker.log.contains("reconciling now")
        }
        let pushes = try await system.waitForPushes(timeout: .seconds(30), "the rebuilt start") { !$0.events("start", stream: "future").isEmpty }
        #expect(pushes.events("start", stream: "future").count == 1)
        await system.stop()
        await server.stopInBackground()
    }
}
