import Foundation
import Testing
import TestSupport

/// SPEC 10.1: end pushes the push service refused go out within 5 s of the first push it accepts again (not at
/// their backoff, 30 s after the first failure), and a 429's `Retry-After` is still honoured.
@Suite(.serialized) struct EndRecoveryTests {
    /// A system whose fake FCM logs every send it answers, with its time (`fakeRequestLog`).
    func makeSystem() async throws -> CountdownSystem {
        var options = SystemOptions()
        options.settings = ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"]
        options.fakeDebug = true
        return try await CountdownSystem(options)
    }

    /// The running stream of `EndFlowTests` (creator and guest sessions on s1), its two end pushes refused with
    /// `fault` once each, then the stream cancelled; returns when the fake answered each refusal, by the fake's
    /// clock (as `RecordedPush.receivedAt`), per FCM token. The fake's own log is read, not a row the worker writes
    /// after the answer: a test process slowed down on a loaded machine still measures from the refusal itself.
    func refusedEnds(_ system: CountdownSystem, fault: [String: Any]) async throws -> [String: Date] {
        try await EndFlowTests().runningStream(system)
        let devices = ["creator-iphone", "guest-iphone"]
        for device in devices {
            try await system.fault(fault.merging(["token": CountdownSystem.fcmToken(device), "nextRequests": 1]) { $1 })
        }
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        let status = try #require(fault["status"] as? Int)
        var refused: [String: Date] = [:]
        try await waitUntil(timeout: .seconds(10), "both end pushes refused with \(status)") {
            let log = try system.fakeRequestLog()
            for device in devices {
                let token = CountdownSystem.fcmToken(device)
                if let refusal = log.first(where: { $0.status == status && token.hasSuffix($0.token) }) {
                    refused[token] = Date(timeIntervalSince1970: refusal.at)
                }
            }
            return refused.count == devices.count
        }
        for end in try await system.pushes().events("end") {
            let refusal = try #require(refused[end.fcmToken], "an end went to \(end.fcmToken)")
            #expect(end.receivedAt > refusal, "the first end push to \(end.fcmToken) was the refused one")
        }
        return refused
    }

    /// Another user's stream enters its start window: its start is the first push the service accepts again.
    func acceptedPush(_ system: CountdownSystem) async throws -> Date {
        try await system.user("other")
        try await system.device("other-iphone", user: "other")
        try await system.stream("s2", startsIn: 20, creator: "other")
        let pushes = try await system.waitForPushes("the other stream's start") {
            $0.events("start").contains { $0.fcmToken == CountdownSystem.fcmToken("other-iphone") }
        }
        return try #require(pushes.events("start").first { $0.fcmToken == CountdownSystem.fcmToken("other-iphone") }).receivedAt
    }

    @Test func endsGoOutWithinFiveSecondsOfThePushServiceAcceptingAgain() async throws {
        let system = try await makeSystem()
        let worker = try system.startWorker()
        _ = try await refusedEnds(system, fault: ["status": 503])
        let recovered = try await acceptedPush(system)
        let pushes = try await system.waitForPushes(timeout: .seconds(10), "the end pushes after the recovery") { $0.events("end").count == 2 }
        for end in pushes.events("end") {
            let delay = end.receivedAt.timeIntervalSince(recovered)
            #expect(delay < 5, "end accepted \(delay) s after the service accepted again")
        }
        #expect(worker.log.contains("end jobs waiting for it are due now"), "the wake says so")
        await system.stop()
    }

    /// The 429 may meet the stream's end job or a late session's end job (the sessions were registered just before
    /// the cancel): either way no end job sends to that session before the `Retry-After` has passed.
    @Test func aRetryAfterIsHonouredBeforeTheEndsAreWoken() async throws {
        let system = try await makeSystem()
        try system.startWorker()
        let refused = try await refusedEnds(system, fault: ["status": 429, "retryAfter": 6])
        _ = try await acceptedPush(system)
        let pushes = try await system.waitForPushes(timeout: .seconds(15), "the end pushes after the Retry-After") { $0.events("end").count == 2 }
        for end in pushes.events("end") {
            // Both times are the fake's: from its 429 to the end it accepted. The worker counts the 6 s from the
            // answer it read, after the fake wrote it.
            let refusal = try #require(refused[end.fcmToken])
            let delay = end.receivedAt.timeIntervalSince(refusal)
            #expect(delay >= 5.9 && delay < 11, "end accepted \(delay) s after the 429 (Retry-After: 6)")
        }
        await system.stop()
    }
}
