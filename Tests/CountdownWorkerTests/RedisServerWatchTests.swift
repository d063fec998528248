@testable import CountdownWorker
import Redis
import Telemetry
import Testing
import TestSupport

/// The watch tells a restarted or replaced Redis server by its `run_id`, so the reconciler runs at once without
/// Sentinel; a server that refuses `INFO` turns it off with one line instead of counting changes.
@Suite struct RedisServerWatchTests {
    @Test func readsTheRunIDOfAnInfoReply() {
        let info = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:0123456789abcdef0123456789abcdef01234567\r\ntcp_port:6379\r\n"
        #expect(RedisServerWatch.runID(inInfo: info) == "0123456789abcdef0123456789abcdef01234567")
        #expect(RedisServerWatch.runID(inInfo: "# Server\nrun_id:abc\n") == "abc")
        #expect(RedisServerWatch.runID(inInfo: "# Server\r\nredis_version:7.0.15\r\n") == nil)
        #expect(RedisServerWatch.runID(inInfo: "run_id:\r\n") == nil)
        #expect(RedisServerWatch.runID(inInfo: "xrun_id:abc\r\n") == nil)
    }

    /// A watch over a Redis server of the test's own, reading it at the URL `url` returns (the server's own by
    /// default), with its log in the sink; the clients and the server are closed afterwards, also on failure.
    static func withWatch(minimumGap: Duration = .seconds(60), url: (ThrowawayRedis) async throws -> String = { $0.url },
                          _ body: (ThrowawayRedis, RedisServerWatch, CapturingLogSink) async throws -> Void) async throws {
        let server = try await ThrowawayRedis.start()
        let redis = try RedisClient(url: try await url(server))
        let sink = CapturingLogSink()
        let watch = RedisServerWatch(redis: redis, minimumGap: minimumGap, logger: Logger(level: .info, sink: sink))
        do {
            try await body(server, watch, sink)
        } catch {
            redis.close()
            await server.stopInBackground()
            throw error
        }
        redis.close()
        await server.stopInBackground()
    }

    @Test func aRestartedServerCountsAsAChange() async throws {
        try await Self.withWatch { server, watch, sink in
            #expect(await watch.check())
            #expect(await watch.check())
            #expect(watch.changes == 0, "the same server read twice")
            try await server.restartInBackground()
            // The first reading after the restart may meet the broken connection; the next one reaches the new server.
            try await waitUntil(timeout: .seconds(15), "the restart to be noticed") {
                #expect(await watch.check())
                return watch.changes == 1
            }
            #expect(await watch.check())
            #expect(watch.changes == 1, "counted once")
            #expect(sink.lines.contains { $0.contains("Redis server changed") }, "\(sink.lines)")
        }
    }

    /// Changes closer together than the minimum gap count once (an address that leads to servers in turn).
    @Test func changesInQuickSuccessionCountOnce() async throws {
        try await Self.withWatch(minimumGap: .seconds(3600)) { server, watch, sink in
            #expect(await watch.check())
            for restart in 1...2 {
                try await server.restartInBackground()
                try await waitUntil(timeout: .seconds(15), "restart \(restart) to be seen") {
                    #expect(await watch.check())
                    return sink.lines.filter { $0.contains("Redis server changed") }.count == restart
                }
            }
            #expect(watch.changes == 1, "the second restart falls inside the gap")
            #expect(sink.lines.contains { $0.contains("changed again within 3600 s") }, "\(sink.lines)")
        }
    }

    @Test func aServerRefusingInfoTurnsTheWatchOff() async throws {
        let refusedInfo = { (server: ThrowawayRedis) async throws -> String in
            let admin = try RedisClient(url: server.url)
            defer { admin.close() }
            _ = try await admin.command(["ACL", "SETUSER", "worker", "on", ">pw", "~*", "&*", "+@all", "-info"]).throwIfError(context: "acl")
            return "redis://worker:pw@127.0.0.1:\(server.port)/0"
        }
        try await Self.withWatch(url: refusedInfo) { _, watch, sink in
            #expect(await watch.check() == false)
            #expect(watch.changes == 0)
            #expect(sink.lines.contains { $0.contains("allow INFO") && $0.contains("NOPERM") }, "\(sink.lines)")
        }
    }
}
