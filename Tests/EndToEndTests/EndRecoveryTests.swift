import Foundation
import Testing
import TestSupport

/// SPEC 10.1: end pushes the push service refused go out within 5 s of the first push it accepts again (not at
/// their backoff, 30 s after the first failure), and a 429's `Retry-After` is still honoured.
@Suite(.serialized) struct EndRecoveryTests {
    /// The running stream of `EndFlowTests` (creator and guest sessions on s1), its two end pushes refused with
    /// `fault` once each, then the stream cancelled; returns when both refusals are recorded (and when).
    func refusedEnds(_ system: CountdownSystem, fault: [String: Any]) async throws -> Date {
        try await EndFlowTests().runningStream(system)
        for device in ["creator-iphone", "guest-iphone"] {
            try await system.fault(fault.merging(["token": CountdownSystem.fcmToken(device), "nextRequests": 1]) { $1 })
        }
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        try await waitUntil(timeout: .seconds(10), "both end pushes refused") {
            try await system.query("SELECT count(*) AS n FROM countdown_end_attempts WHERE stream_id = 's1'")[0].decode("n", as: Int.self) == 2
        }
        #expect(try await system.pushes().events("end").isEmpty)
        return Date()
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
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
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

    @Test func aRetryAfterIsHonouredBeforeTheEndsAreWoken() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        try system.startWorker()
        let refused = try await refusedEnds(system, fault: ["status": 429, "retryAfter": 6])
        _ = try await acceptedPush(system)
        let pushes = try await system.waitForPushes(timeout: .seconds(15), "the end pushes after the Retry-After") { $0.events("end").count == 2 }
        for end in pushes.events("end") {
            let delay = end.receivedAt.timeIntervalSince(refused)
            #expect(delay >= 5.5 && delay < 11, "end accepted \(delay) s after the 429 (Retry-After: 6)")
        }
        await system.stop()
    }
}
