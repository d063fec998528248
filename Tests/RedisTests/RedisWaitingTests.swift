import Foundation
import Redis
import TestSupport
import Testing

@Suite struct RedisWaitingTests {
    let configuration: RedisConfiguration
    let prefix = TestEnvironment.uniqueName("wait")

    init() throws { configuration = try RedisConfiguration(url: TestEnvironment.redisURL) }

    @Test func subscriberGetsMessagesTimesOutPreciselyAndCanBeInterrupted() async throws {
        let client = RedisClient(configuration: configuration, poolSize: 1)
        let channel = RedisArgument("\(prefix):channel")
        let subscriber = try RedisSubscriber(configuration: configuration, channels: [channel])
        try await subscriber.start()
        try await client.command("PUBLISH", channel, "hello")
        #expect(try await subscriber.next(timeout: .seconds(5)) == .message(channel: channel.bytes, payload: Array("hello".utf8)))

        // Waits end on time (poll with a millisecond timeout, not the server's 100 ms timer); the shortest of a few
        // tries tells the precision apart from scheduling noise on a busy machine.
        let clock = ContinuousClock()
        var waits: [Duration] = []
        for _ in 0..<5 {
            let started = clock.now
            #expect(try await subscriber.next(timeout: .milliseconds(30)) == .timedOut)
            waits.append(clock.now - started)
        }
        #expect(waits.allSatisfy { $0 >= .milliseconds(29) }, "\(waits)")
        #expect(waits.min()! < .milliseconds(80), "\(waits)")

        subscriber.interrupt()
        #expect(try await subscriber.next(timeout: .seconds(5)) == .interrupted)
        try await client.command("PUBLISH", channel, "after")
        #expect(try await subscriber.next(timeout: .seconds(5)) == .message(channel: channel.bytes, payload: Array("after".utf8)))
        client.close()
    }

    @Test func subscriberResubscribesAfterRestart() async throws {
        let server = try await ThrowawayRedis.start()
        let configuration = try RedisConfiguration(url: server.url)
        let subscriber = try RedisSubscriber(configuration: configuration, channels: ["wake"])
        try await subscriber.start()
        try await server.restartInBackground()
        #expect(try await subscriber.next(timeout: .seconds(5)) == .resubscribed)
        let client = RedisClient(configuration: configuration, poolSize: 1)
        try await client.command("PUBLISH", "wake", "1")
        #expect(try await subscriber.next(timeout: .seconds(5)) == .message(channel: Array("wake".utf8), payload: Array("1".utf8)))
        client.close()
        await server.stopInBackground()
    }
}
