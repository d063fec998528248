import BlockingIO
import Foundation
import Redis
import TestSupport
import Testing

@Suite struct RedisClientTests {
    let client: RedisClient
    let prefix: String

    init() throws {
        client = try RedisClient(url: TestEnvironment.redisURL, poolSize: 4)
        prefix = TestEnvironment.uniqueName("redis")
    }

    @Test func roundTripsBinaryUnicodeEmptyAndMissingValues() async throws {
        let binary: [UInt8] = [0, 1, 0, 255, 13, 10, 0]
        let values: [(String, RedisArgument)] = [
            ("binary", RedisArgument(bytes: binary)), ("unicode", "Yayına kalan süre • 🎬"), ("empty", ""),
        ]
        for (name, value) in values {
            try await client.command("SET", RedisArgument("\(prefix):\(name)"), value)
            let reply = try await client.command("GET", RedisArgument("\(prefix):\(name)"))
            #expect(reply == .bulk(value.bytes), "\(name)")
        }
        #expect(try await client.command("GET", RedisArgument("\(prefix):missing")) == .null)
        let key = RedisArgument(bytes: Array("\(prefix):".utf8) + [0, 0xFF])
        try await client.command("SET", key, "zero-byte key")
        #expect(try await client.command("GET", key).string == "zero-byte key")
        #expect(try await client.command("PING") == .status("PONG"))
        #expect(try await client.command("INCRBY", RedisArgument("\(prefix):n"), 41).integer == 41)
        let array = try await client.command("MGET", RedisArgument("\(prefix):unicode"), RedisArgument("\(prefix):missing"))
        #expect(array == .array([.bulk(Array("Yayına kalan süre • 🎬".utf8)), .null]))
    }

    @Test func serverErrorsAreTyped() async throws {
        try await client.command("SET", RedisArgument("\(prefix):text"), "abc")
        await #expect { try await client.command("INCR", RedisArgument("\(prefix):text")) } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .server && error.message.contains("not an integer") && error.context == "INCR"
        }
        await #expect { try await client.command("NOSUCHCOMMAND") } throws: { ($0 as? RedisError)?.code == .server }
        await #expect { try await client.command("EVALSHA", "0000000000000000000000000000000000000000", 0) } throws: {
            ($0 as? RedisError)?.code == .noScript
        }
        #expect(try await client.command("PING") == .status("PONG"), "the connection survives server errors")
    }

    @Test func pipelinesTenThousandCommandsInOrder() async throws {
        let key = RedisArgument("\(prefix):counter")
        var commands: [[RedisArgument]] = (0..<10_000).map { _ in ["INCR", key] }
        commands.insert(["HGET", key, "field"], at: 5_000)
        let replies = try await client.pipeline(commands)
        #expect(replies.count == 10_001)
        #expect(replies[0] == .integer(1))
        #expect(replies[4_999] == .integer(5_000))
        if case .error(let message) = replies[5_000] { #expect(message.hasPrefix("WRONGTYPE")) } else { Issue.record("expected WRONGTYPE") }
        #expect(replies[10_000] == .integer(10_000))
    }

    @Test func scriptsRunBySHAAndReloadAfterFlush() async throws {
        let server = try await ThrowawayRedis.start()
        let client = try RedisClient(url: server.url, poolSize: 1)
        let script = RedisScript(name: "test.echo", source: "return {KEYS[1], ARGV[1], redis.call('INCR', KEYS[1])}")
        let key = RedisArgument("\(prefix):script")
        #expect(try await client.run(script: script, keys: [key], args: ["a\u{0}b"]) == .array([.bulk(key.bytes), .bulk(Array("a\u{0}b".utf8)), .integer(1)]))
        _ = try await client.run(script: script, keys: [key], args: ["x"])
        #expect(try await Self.scriptLoads(client) == 1, "loaded once, then run by SHA")
        try await client.command("SCRIPT", "FLUSH")
        #expect(try await client.run(script: script, keys: [key], args: ["x"]).array?.last == .integer(3))
        try await client.command("SCRIPT", "FLUSH")
        let replies = try await client.runPipelined(script: script, calls: (0..<3).map { _ in (keys: [key], args: ["y"]) })
        #expect(replies.map { $0.array?.last } == [.integer(4), .integer(5), .integer(6)])
        #expect(try await Self.scriptLoads(client) == 3)
        let failing = RedisScript(name: "test.fail", source: "return redis.error_reply('BOOM nope')")
        await #expect { try await client.run(script: failing) } throws: {
            ($0 as? RedisError).map { $0.code == .server && $0.message == "BOOM nope" && $0.context == "test.fail" } ?? false
        }
        client.close()
        await server.stopInBackground()
    }

    @Test func reconnectsAfterServerRestart() async throws {
        let server = try await ThrowawayRedis.start()
        let client = try RedisClient(url: server.url, poolSize: 2)
        try await client.command("SET", "kept", "1")
        try await server.restartInBackground()
        try await Self.waitUntilLoaded(server)
        // A plain (non-retried) command still works: the idle connection noticed the server closed it.
        #expect(try await client.command("GET", "kept").string == "1")
        await server.stopInBackground()
        await #expect { try await client.command("GET", "kept") } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .connectionFailed || error.code == .io
        }
        try await server.startInBackground()
        try await Self.waitUntilLoaded(server)
        #expect(try await client.command(["GET", "kept"], retry: .onceOnBrokenConnection).string == "1")
        client.close()
        await server.stopInBackground()
    }

    @Test func connectionRefusedFailsFastWithAClearError() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let port = refusing.port
        let client = try RedisClient(url: "redis://127.0.0.1:\(port)/0")
        let started = ContinuousClock.now
        await #expect { try await client.command("PING") } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .connectionFailed && error.context.contains("127.0.0.1:\(port)")
                && error.message.lowercased().contains("refused")
        }
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func passwordAndDatabaseFromTheURL() async throws {
        let server = try await ThrowawayRedis.start(extraArguments: ["--requirepass", "s3cr@t pw"])
        let client = try RedisClient(url: "redis://:s3cr%40t%20pw@127.0.0.1:\(server.port)/2")
        try await client.command("SET", "where", "db2")
        let info = try await client.command("CLIENT", "INFO").string ?? ""
        #expect(info.contains("db=2"))
        let other = try RedisClient(url: "redis://:s3cr%40t%20pw@127.0.0.1:\(server.port)/0")
        #expect(try await other.command("GET", "where") == .null)
        let wrong = try RedisClient(url: "redis://:nope@127.0.0.1:\(server.port)/2")
        await #expect { try await wrong.command("PING") } throws: { ($0 as? RedisError)?.code == .authenticationFailed }
        let none = try RedisClient(url: "redis://127.0.0.1:\(server.port)/0")
        await #expect { try await none.command("GET", "where") } throws: { ($0 as? RedisError)?.code == .authenticationFailed }
        let user = try RedisClient(url: "redis://default:s3cr%40t%20pw@127.0.0.1:\(server.port)/2")
        #expect(try await user.command("GET", "where").string == "db2")
        for client in [client, other, wrong, none, user] { client.close() }
        await server.stopInBackground()
    }

    @Test func poolNeverOpensMoreThanItsBound() async throws {
        let client = try RedisClient(url: TestEnvironment.redisURL, poolSize: 2)
        let name = RedisArgument(prefix)
        let inFlight = Locked((now: 0, peak: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await client.withConnection { connection in
                        inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        try connection.command("CLIENT", "SETNAME", name)
                        Thread.sleep(forTimeInterval: 0.01)
                        inFlight.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inFlight.value.peak == 2)
        let clients = try await client.command("CLIENT", "LIST").string ?? ""
        #expect(clients.split(separator: "\n").filter { $0.contains("name=\(prefix) ") }.count == 2)
        client.close()
        await #expect { try await client.command("PING") } throws: { ($0 as? RedisError)?.code == .closed }
    }

    @Test func slowRepliesTimeOutAndTheConnectionRecovers() async throws {
        let server = try await ThrowawayRedis.start(extraArguments: ["--enable-debug-command", "yes"])
        var configuration = try RedisConfiguration(url: server.url)
        configuration.commandTimeout = .milliseconds(200)
        let client = RedisClient(configuration: configuration, poolSize: 1)
        let started = ContinuousClock.now
        await #expect { try await client.command("DEBUG", "SLEEP", "0.6") } throws: { ($0 as? RedisError)?.code == .timeout }
        #expect(ContinuousClock.now - started < .seconds(2))
        try await waitUntil(timeout: .seconds(5), "the server to wake up") {
            (try? await client.command("PING")) == .status("PONG")
        }
        client.close()
        await server.stopInBackground()
    }

    /// A restarted server accepts connections before it has read its AOF back (it answers `LOADING` meanwhile).
    private static func waitUntilLoaded(_ server: ThrowawayRedis) async throws {
        let probe = try RedisClient(url: server.url, poolSize: 1)
        defer { probe.close() }
        try await waitUntil(timeout: .seconds(10), "the restarted server to load its data") {
            (try? await probe.command("PING")) == .status("PONG")
        }
    }

    private static func scriptLoads(_ client: RedisClient) async throws -> Int {
        let stats = try await client.command("INFO", "commandstats").string ?? ""
        guard let line = stats.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_script|load:") }),
              let calls = line.split(separator: ":")[1].split(separator: ",").first?.split(separator: "=").last else { return 0 }
        return Int(calls) ?? 0
    }
}
