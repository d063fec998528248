import BlockingIO
import Foundation
import HTTPClient
import HTTPTypes
import Push
import PushGuard
import TestSupport
import Testing
import Telemetry

/// `PushTransport.sendAll` through every layer: one HTTP batch, one rate-limit reservation, the same token
/// refresh, guard and routing rules as single sends, results in input order.
@Suite struct PushBatchSendTests {
    final class CountingLimiter: RateLimiter {
        let acquired = Locked<[Int]>([])
        let throttled = Locked(0)
        let failing: Bool
        init(failing: Bool = false) { self.failing = failing }
        func acquire(_ permits: Int) async throws {
            if failing { throw CancellationError() }
            acquired.withLock { $0.append(permits) }
        }
        func reportThrottled() async { throttled.withLock { $0 += 1 } }
    }

    /// Answers each message by its id and records the batches it was handed.
    final class BatchRecorder: PushTransport {
        let batches = Locked<[[String]]>([])
        let answer: @Sendable (PushMessage) -> PushResult
        init(_ answer: @escaping @Sendable (PushMessage) -> PushResult = { .accepted(messageName: $0.id) }) { self.answer = answer }
        func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
            batches.withLock { $0.append(messages.map(\.id)) }
            for index in messages.indices { onAnswer?(index) }
            return messages.map(answer)
        }
    }

    static func notification(_ id: String) -> PushMessage {
        .notification(id: id, fcmToken: "fcm-\(id)", title: "t", body: "b", data: [:])
    }

    @Test func anFCMBatchIsAnsweredInOrderWithOneRequestPerMessage() async throws {
        let harness = try await FCMHarness.make(latencyMilliseconds: 20)
        var messages = (0..<12).map { FCMHarness.liveActivity(token: "ok-\($0)") }
        messages[5] = .liveActivity(id: "bad", fcmToken: "ok-bad", activityToken: "pts", apnsHeaders: [:], apsJSON: Array("[1]".utf8))
        let results = await harness.transport.sendAll(messages)
        #expect(results.count == 12)
        for (index, result) in results.enumerated() {
            #expect(result.label == (index == 5 ? "rejected" : "accepted"), "message \(index): \(result)")
        }
        #expect(try await harness.sends().count == 11, "the message without a valid body is not sent")
        #expect(try await harness.tokenRequests().count == 1)
    }

    @Test func anExpiredTokenInABatchIsRefreshedOnceAndOnlyItsMessagesAreSentAgain() async throws {
        let harness = try await FCMHarness.make()
        #expect(await harness.transport.send(FCMHarness.liveActivity(token: "ok-warm")).label == "accepted")
        try await harness.control.revokeTokens()
        let results = await harness.transport.sendAll((0..<6).map { FCMHarness.liveActivity(token: "ok-\($0)") })
        #expect(results.allSatisfy { $0.label == "accepted" })
        #expect(try await harness.tokenRequests().count == 2)
        let sends = try await harness.sends()
        #expect(sends.count == 1 + 6 + 6)
        #expect(sends.filter { $0.status == 401 }.count == 6, "each message of the batch was refused once, then sent again")
    }

    @Test func aBatchRefusedAfterTheRefreshIsAConfigurationErrorWithoutSpinning() async throws {
        let harness = try await FCMHarness.make()
        try await harness.control.fault(["status": 401, "forSeconds": 600])
        let results = await harness.transport.sendAll((0..<4).map { FCMHarness.liveActivity(token: "ok-\($0)") })
        #expect(results.allSatisfy { $0.label == "configuration_error" }, "\(results)")
        #expect(try await harness.tokenRequests().count == 2)
        #expect(try await harness.sends().count == 8)
    }

    @Test func aRateLimitedBatchReservesItsPermitsAtOnceAndReportsThrottlingOnce() async {
        let limiter = CountingLimiter()
        let base = BatchRecorder { $0.id.hasPrefix("q") ? .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED") : .accepted(messageName: $0.id) }
        let transport = RateLimitedTransport(base, limiter: limiter)
        let results = await transport.sendAll(["a", "q1", "b", "q2"].map(Self.notification))
        #expect(results == [.accepted(messageName: "a"), .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED"),
                            .accepted(messageName: "b"), .retryable(after: .seconds(7), reason: "QUOTA_EXCEEDED")])
        #expect(limiter.acquired.value == [4])
        #expect(limiter.throttled.value == 1)
        #expect(base.batches.value == [["a", "q1", "b", "q2"]])
        #expect(await transport.sendAll([]).isEmpty)
        #expect(limiter.acquired.value == [4])
    }

    @Test func aBatchTheLimiterCannotReserveIsRetriedWithoutSending() async {
        let base = BatchRecorder()
        let results = await RateLimitedTransport(base, limiter: CountingLimiter(failing: true)).sendAll(["a", "b"].map(Self.notification))
        #expect(results.count == 2 && results.allSatisfy { $0.label == "retryable" })
        #expect(base.batches.value.isEmpty)
    }

    @Test func routingSplitsABatchByContentAndKeepsItsOrder() async {
        let activities = BatchRecorder { .accepted(messageName: "apns:" + $0.id) }
        let notifications = BatchRecorder { .accepted(messageName: "fcm:" + $0.id) }
        let transport = RoutingTransport(liveActivities: activities, notifications: notifications)
        let live = { (id: String) in PushMessage.liveActivity(id: id, fcmToken: "f", activityToken: "a", apnsHeaders: [:], apsJSON: Array("{}".utf8)) }
        let results = await transport.sendAll([live("s1"), Self.notification("r1"), live("s2"), Self.notification("r2")])
        #expect(results == [.accepted(messageName: "apns:s1"), .accepted(messageName: "fcm:r1"),
                            .accepted(messageName: "apns:s2"), .accepted(messageName: "fcm:r2")])
        #expect(activities.batches.value == [["s1", "s2"]])
        #expect(notifications.batches.value == [["r1", "r2"]])
        _ = await transport.sendAll([Self.notification("r3")])
        #expect(activities.batches.value.count == 1, "a batch of one kind goes to its transport alone")
    }

    @Test func theTokenGuardCountsABatchBeforeLettingAnyOfItsRefusalsThrough() async {
        let window = TokenGuardedTransportTests.MemoryWindow()
        let transport = TokenGuardedTransport(
            BatchRecorder { $0.id.hasPrefix("dead") ? .tokenRefused(TokenGuardedTransportTests.mismatch) : .accepted(messageName: $0.id) },
            rule: TokenGuard(minRefusals: 20, ratio: 0.2), window: window, logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        // A healthy batch with two dead tokens: counted (one window call), refusals passed on.
        let healthy = await transport.sendAll((0..<30).map { Self.notification($0 < 2 ? "dead\($0)" : "ok\($0)") })
        #expect(healthy.prefix(2).allSatisfy { if case .tokenRefused = $0 { true } else { false } })
        #expect(healthy.dropFirst(2).allSatisfy { $0.label == "accepted" })
        #expect(window.counts.value == TokenGuard.Counts(sends: 30, refusals: 2))
        #expect(!transport.isTripped)
        // A batch of refusals that trips the guard: none of them is passed on (not even the first 17).
        let storm = await transport.sendAll((0..<32).map { Self.notification("dead\($0)") })
        #expect(storm.allSatisfy { $0 == .retryable(after: .seconds(30), reason: "token_guard") }, "\(storm)")
        #expect(transport.isTripped)
        #expect(window.counts.value == TokenGuard.Counts(sends: 62, refusals: 34))
    }

    @Test func aBatchWhoseRefusalsCannotBeCountedKeepsItsTokens() async {
        let transport = TokenGuardedTransport(
            BatchRecorder { $0.id.hasPrefix("dead") ? .tokenRefused(TokenGuardedTransportTests.mismatch) : .accepted(messageName: $0.id) },
            rule: TokenGuard(minRefusals: 20, ratio: 0.2), window: TokenGuardedTransportTests.MemoryWindow(failing: true),
            logger: Telemetry.Logger(level: .info, sink: CapturingLogSink()))
        let results = await transport.sendAll(["ok1", "dead1", "ok2"].map(Self.notification))
        #expect(results == [.accepted(messageName: "ok1"), .retryable(after: .seconds(30), reason: "token_guard_unavailable"),
                            .accepted(messageName: "ok2")])
    }

    /// Answers every request 200 with an FCM message name and records how requests arrive.
    final class BatchCountingHTTP: HTTPRequestSending {
        let rounds = Locked<[Int]>([])
        func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>] {
            rounds.withLock { $0.append(requests.count) }
            return requests.indices.map { index in
                let outcome = Result<HTTPResponse, HTTPClientError>.success(ScriptedHTTP.response(200, #"{"name":"projects/p/messages/1"}"#))
                onAnswer?(index, outcome)
                return outcome
            }
        }
    }

    struct FixedToken: AccessTokenProviding {
        func accessToken() async throws -> String { "token" }
        func invalidate(_ token: String) async {}
    }

    @Test func anFCMBatchIsOneRoundOfTheHTTPClientAndTellsEachAnswer() async {
        let http = BatchCountingHTTP()
        let transport = FCMTransport(projectID: "p", tokens: FixedToken(), http: http)
        let answers = Locked(0)
        let results = await transport.sendAll((0..<20).map { FCMHarness.liveActivity(token: "ok-\($0)") }, onAnswer: { _ in answers.withLock { $0 += 1 } })
        #expect(results.allSatisfy { $0 == .accepted(messageName: "projects/p/messages/1") })
        #expect(http.rounds.value == [20])
        #expect(answers.value == 20)
        _ = await transport.send(FCMHarness.liveActivity(token: "ok-one"))
        #expect(http.rounds.value == [20, 1], "a single push is a batch of one request")
    }

    /// Answers the first round of every batch 401 (an expired token) and the second 200, telling each answer as it
    /// comes; counts the requests in flight.
    final class ExpiringHTTP: HTTPRequestSending {
        let rounds = Locked(0)
        let inFlight = Locked(0)
        /// Called as a round starts, with the requests then in flight.
        let onRound: @Sendable (_ inFlight: Int) -> Void
        init(onRound: @escaping @Sendable (Int) -> Void) { self.onRound = onRound }
        func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>] {
            let round = rounds.withLock { $0 += 1; return $0 }
            onRound(inFlight.withLock { $0 += requests.count; return $0 })
            return requests.indices.map { index in
                let outcome = Result<HTTPResponse, HTTPClientError>.success(
                    round == 1 ? ScriptedHTTP.response(401, #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)
                               : ScriptedHTTP.response(200, #"{"name":"projects/p/messages/1"}"#))
                inFlight.withLock { $0 -= 1 }
                onAnswer?(index, outcome)
                return outcome
            }
        }
    }

    @Test func aMessageSentAgainAfterATokenRefreshIsAnsweredOnceWithItsFinalResult() async {
        // The caller frees a message's slot as it is answered; a slot freed is taken by another push at once.
        let freed = Locked(0)
        let mostInFlight = Locked(0)
        let http = ExpiringHTTP { inFlight in mostInFlight.withLock { $0 = max($0, inFlight + freed.value) } }
        let transport = FCMTransport(projectID: "p", tokens: FixedToken(), http: http)
        let answers = Locked([Int: Int]())
        let results = await transport.sendAll((0..<5).map { FCMHarness.liveActivity(token: "ok-\($0)") }, onAnswer: { index in
            answers.withLock { $0[index, default: 0] += 1 }
            freed.withLock { $0 += 1 }
        })
        #expect(results.allSatisfy { $0 == .accepted(messageName: "projects/p/messages/1") }, "\(results)")
        #expect(http.rounds.value == 2)
        #expect(answers.value == Dictionary(uniqueKeysWithValues: (0..<5).map { ($0, 1) }), "each message answered once")
        #expect(mostInFlight.value <= 5, "never more pushes in flight than slots taken")
    }
    /// Answers every request 503 with a Retry-After date, telling each answer while `insideHook` is set.
    final class FailingHTTP: HTTPRequestSending {
        let insideHook = Locked(false)
        func sendAll(_ requests: [HTTPRequest], onAnswer: AnswerHook?) async -> [Result<HTTPResponse, HTTPClientError>] {
            requests.indices.map { index in
                let outcome = Result<HTTPResponse, HTTPClientError>.success(ScriptedHTTP.response(
                    503, #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#, headers: ["Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"]))
                insideHook.withLock { $0 = true }
                onAnswer?(index, outcome)
                insideHook.withLock { $0 = false }
                return outcome
            }
        }
    }

    @Test func answersAreToldWithoutBeingClassifiedOnTheHTTPClientsThread() async {
        // The hook runs on the thread that drives every socket of the service: classifying there (a JSON decoder,
        // Retry-After dates) would hold up every other answer. The classifier reads the clock; it must not be read
        // inside the hook.
        let http = FailingHTTP()
        let classifiedInsideHook = Locked(0)
        let transport = FCMTransport(projectID: "p", tokens: FixedToken(), http: http, now: {
            if http.insideHook.value { classifiedInsideHook.withLock { $0 += 1 } }
            return Date()
        })
        let answers = Locked([Int: Int]())
        let results = await transport.sendAll((0..<4).map { FCMHarness.liveActivity(token: "ok-\($0)") }, onAnswer: { index in
            answers.withLock { $0[index, default: 0] += 1 }
        })
        #expect(results.allSatisfy { if case .retryable(_?, "UNAVAILABLE") = $0 { true } else { false } }, "\(results)")
        #expect(answers.value == Dictionary(uniqueKeysWithValues: (0..<4).map { ($0, 1) }), "each message answered once")
        #expect(classifiedInsideHook.value == 0)
    }
}
