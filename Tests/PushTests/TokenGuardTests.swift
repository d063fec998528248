import BlockingIO
import Push
import PushGuard
import Redis
import Telemetry
import Testing
import TestSupport

/// The token guard's rule, pure.
@Suite struct TokenGuardRuleTests {
    let rule = TokenGuard(minRefusals: 20, ratio: 0.2)

    @Test func tripsAtTheMinimumWhenRefusalsAreMoreThanTheRatio() {
        #expect(rule.isTripped(.init(sends: 20, refusals: 20)))
        #expect(rule.isTripped(.init(sends: 99, refusals: 20)))
        #expect(!rule.isTripped(.init(sends: 19, refusals: 19)), "fewer than the minimum never trips")
    }

    @Test func aRealShareOfDeadTokensDoesNotTrip() {
        // Chaos scenario 7: 10% of the devices have dead tokens.
        #expect(!rule.isTripped(.init(sends: 1000, refusals: 100)))
        #expect(!rule.isTripped(.init(sends: 100, refusals: 20)), "exactly the ratio is not more than it")
        #expect(rule.isTripped(.init(sends: 99, refusals: 21)))
    }

    @Test func resetsWhenSendsAreAcceptedAgain() {
        #expect(rule.isTripped(.init(sends: 50, refusals: 50)))
        #expect(!rule.isTripped(.init(sends: 300, refusals: 50)))
    }

    @Test func refusalsAreAmongTheSends() {
        #expect(rule.isTripped(.init(sends: 0, refusals: 25)), "counts read mid-update never divide by zero")
    }
}

/// The transport wrapper with an in-memory window.
@Suite struct TokenGuardedTransportTests {
    final class MemoryWindow: TokenGuardWindow {
        let counts = Locked(TokenGuard.Counts(sends: 0, refusals: 0))
        let failing: Bool
        init(failing: Bool = false) { self.failing = failing }
        func record(sends: Int, refusals: Int) async throws -> TokenGuard.Counts {
            if failing { throw RedisError(.connectionFailed, "down", context: "test") }
            return counts.withLock { counts in
                counts.sends += sends
                counts.refusals += refusals
                return counts
            }
        }
    }

    struct Answering: PushTransport {
        let answer: @Sendable (PushMessage) -> PushResult
        func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
            messages.enumerated().map { index, message in
                defer { onAnswer?(index) }
                return answer(message)
            }
        }
    }

    static let mismatch = TokenRefusal(token: .fcm, reason: "SENDER_ID_MISMATCH", suspect: TokenRefusal.fcmProject, misconfigurationShaped: true)

    static func message(_ token: String) -> PushMessage {
        .notification(id: "reminder", fcmToken: token, title: "t", body: "b", data: [:])
    }

    @Test func aBurstOfRefusalsPassesAtMostTheMinimumThenIsRetried() async {
        let sink = CapturingLogSink()
        let states = Locked<[Bool]>([])
        let transport = TokenGuardedTransport(
            Answering { _ in .tokenRefused(Self.mismatch) }, rule: TokenGuard(minRefusals: 20, ratio: 0.2), window: MemoryWindow(),
            logger: Telemetry.Logger(level: .info, sink: sink)) { tripped in states.withLock { $0.append(tripped) } }
        var passed = 0
        var held = 0
        for index in 0..<100 {
            switch await transport.send(Self.message("t\(index)")) {
            case .tokenRefused: passed += 1
            case .retryable(let after, "token_guard"): held += 1; #expect(after == .seconds(30))
            default: Issue.record("unexpected result")
            }
        }
        #expect(passed == 19)
        #expect(held == 81)
        #expect(transport.isTripped)
        #expect(states.value.last == true)
        let errors = sink.lines.filter { $0.contains("token guard tripped") }
        #expect(errors.count == 1, "one error log per trip, not one per refusal")
        #expect(errors.first?.contains("FCM_PROJECT_ID") == true)
    }

    /// The counts of a 60 s window on a clock the test moves (per-second buckets, as the Redis window keeps them).
    final class ClockedWindow: TokenGuardWindow {
        let second = Locked(0)
        let buckets = Locked<[Int: TokenGuard.Counts]>([:])
        func record(sends: Int, refusals: Int) async throws -> TokenGuard.Counts {
            let now = second.value
            return buckets.withLock { buckets in
                buckets[now, default: .init(sends: 0, refusals: 0)].sends += sends
                buckets[now, default: .init(sends: 0, refusals: 0)].refusals += refusals
                buckets = buckets.filter { $0.key > now - 60 }
                return buckets.values.reduce(into: .init(sends: 0, refusals: 0)) { $0.sends += $1.sends; $0.refusals += $1.refusals }
            }
        }
    }

    @Test func heldRefusalsComeBackWhileTheBurstThatTrippedTheGuardStillCounts() async {
        // A wrong project refuses a burst within one second; what the guard holds comes back after `retryAfter` and
        // is refused again. No retry clears a token, in the first round or the next ones.
        let window = ClockedWindow()
        let rule = TokenGuard(minRefusals: 20, ratio: 0.2)
        let transport = TokenGuardedTransport(
            Answering { _ in .tokenRefused(Self.mismatch) }, rule: rule, window: window, logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        var held: [String] = []
        for index in 0..<100 {
            if case .retryable = await transport.send(Self.message("t\(index)")) { held.append("t\(index)") }
        }
        #expect(held.count == 81)
        for round in 1...4 {
            window.second.withLock { $0 += Int(rule.retryAfter.components.seconds) }
            var cleared = 0
            for token in held {
                if case .tokenRefused = await transport.send(Self.message(token)) { cleared += 1 }
            }
            #expect(cleared == 0, "retry round \(round), \(rule.retryAfter) after the last: \(cleared) tokens cleared")
        }
    }

    @Test func acceptedSendsResetTheGuard() async {
        let refusing = Locked(true)
        let transport = TokenGuardedTransport(
            Answering { _ in refusing.value ? .tokenRefused(Self.mismatch) : .accepted(messageName: nil) },
            rule: TokenGuard(minRefusals: 5, ratio: 0.2), window: MemoryWindow(), logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()), flushEvery: 1)
        for index in 0..<10 { _ = await transport.send(Self.message("t\(index)")) }
        #expect(transport.isTripped)
        refusing.withLock { $0 = false }
        for index in 0..<60 { _ = await transport.send(Self.message("ok\(index)")) }
        #expect(!transport.isTripped)
    }

    @Test func aTickResetsTheGuardWithoutSends() async {
        let window = MemoryWindow()
        let states = Locked<[Bool]>([])
        let transport = TokenGuardedTransport(
            Answering { _ in .tokenRefused(Self.mismatch) }, rule: TokenGuard(minRefusals: 2, ratio: 0.2), window: window,
            logger: Telemetry.Logger(level: .info, sink: CapturingLogSink())) { tripped in states.withLock { $0.append(tripped) } }
        for index in 0..<3 { _ = await transport.send(Self.message("t\(index)")) }
        #expect(transport.isTripped)
        window.counts.withLock { $0 = .init(sends: 0, refusals: 0) }  // the refusals left the window
        await transport.flush()
        #expect(!transport.isTripped)
        #expect(states.value.last == false)
    }

    @Test func otherResultsPassUnchanged() async {
        let transport = TokenGuardedTransport(
            Answering { _ in .retryable(after: nil, reason: "UNAVAILABLE") }, rule: TokenGuard(minRefusals: 1, ratio: 0),
            window: MemoryWindow(), logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        #expect(await transport.send(Self.message("a")) == .retryable(after: nil, reason: "UNAVAILABLE"))
    }

    @Test func anUnreadableWindowKeepsTheToken() async {
        let transport = TokenGuardedTransport(
            Answering { _ in .tokenRefused(Self.mismatch) }, rule: TokenGuard(), window: MemoryWindow(failing: true),
            logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        guard case .retryable(_, "token_guard_unavailable") = await transport.send(Self.message("a")) else {
            Issue.record("a refusal must not pass unchecked")
            return
        }
    }
}

/// The fleet-wide window in real Redis.
@Suite struct RedisTokenGuardWindowTests {
    let redis: RedisClient
    let namespace = TestEnvironment.uniqueName("guard")

    init() throws {
        redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 2)
    }

    @Test func workersShareOneWindow() async throws {
        let first = RedisTokenGuardWindow(redis: redis, namespace: namespace)
        let second = RedisTokenGuardWindow(redis: redis, namespace: namespace)
        #expect(try await first.record(sends: 10, refusals: 0) == .init(sends: 10, refusals: 0))
        #expect(try await second.record(sends: 5, refusals: 5) == .init(sends: 15, refusals: 5))
        #expect(try await first.record(sends: 0, refusals: 0) == .init(sends: 15, refusals: 5))
        let other = RedisTokenGuardWindow(redis: redis, namespace: TestEnvironment.uniqueName("guard"))
        #expect(try await other.record(sends: 0, refusals: 0) == .init(sends: 0, refusals: 0))
    }

    @Test func secondsThatLeftTheWindowNoLongerCount() async throws {
        let window = RedisTokenGuardWindow(redis: redis, namespace: namespace, window: .seconds(1))
        #expect(try await window.record(sends: 3, refusals: 3) == .init(sends: 3, refusals: 3))
        let deadline = ContinuousClock.now + .seconds(5)
        var counts = try await window.record(sends: 0, refusals: 0)
        while counts.refusals > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            counts = try await window.record(sends: 0, refusals: 0)
        }
        #expect(counts == .init(sends: 0, refusals: 0))
    }

    @Test func theGuardTripsFleetWide() async throws {
        let refusing = TokenGuardedTransportTests.Answering { _ in .tokenRefused(TokenGuardedTransportTests.mismatch) }
        let workers = (0..<3).map { _ in
            TokenGuardedTransport(refusing, rule: TokenGuard(minRefusals: 20, ratio: 0.2),
                                  window: RedisTokenGuardWindow(redis: redis, namespace: namespace), logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        }
        var passed = 0
        for index in 0..<60 {
            if case .tokenRefused = await workers[index % 3].send(TokenGuardedTransportTests.message("t\(index)")) { passed += 1 }
        }
        #expect(passed == 19, "three workers together clear at most the minimum")
        #expect(workers.allSatisfy { $0.isTripped })
    }

    /// A wrong APNS_ENVIRONMENT: APNs answers BadDeviceToken to every push of a burst from two workers. At most
    /// the minimum pass as refusals (tokens the flows would clear); the rest are retried, and the error log
    /// names APNS_ENVIRONMENT.
    @Test func aWrongAPNsEnvironmentIsHeldBackFleetWide() async throws {
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(400, #"{"reason":"BadDeviceToken"}"#) }
        let sink = CapturingLogSink()
        let workers = try (0..<2).map { _ in
            let provider = try APNsProviderToken(keyFile: PushTestKeys.p8Path, keyID: "TESTKEY123", teamID: "TEAM456789")
            let apns = APNsTransport(configuration: APNsTransportTests.configuration(), tokens: provider, http: http)
            return TokenGuardedTransport(apns, rule: TokenGuard(minRefusals: 20, ratio: 0.2),
                                         window: RedisTokenGuardWindow(redis: redis, namespace: namespace), logger: Telemetry.Logger(level: .info, sink: sink))
        }
        var refused = 0
        var held = 0
        for index in 0..<200 {
            switch await workers[index % 2].send(APNsTransportTests.message(token: String(format: "%064x", index))) {
            case .tokenRefused(let refusal):
                refused += 1
                #expect(refusal.token == .activity)
            case .retryable(_, "token_guard"): held += 1
            default: Issue.record("unexpected result")
            }
        }
        #expect(refused == 19)
        #expect(held == 181)
        #expect(sink.lines.contains { $0.contains("token guard tripped") && $0.contains("APNS_ENVIRONMENT") })
    }
}
