import Foundation
import Testing
import TestSupport

/// SPEC 12.2: an end refused for any reason but a dead token is retried at most 10 s apart during its first minute, so
/// a fault that clears within 20 s has the end accepted within 30 s of the cancel (the backoff alone took 30 s).
@Suite(.serialized) struct EndRetryTests {
    @Test func endsRefusedForTwentySecondsAreAcceptedWithinThirtySecondsOfTheCancel() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        try system.startWorker()
        try await EndFlowTests().runningStream(system)
        // The push service refuses both devices' pushes with 400 INVALID_ARGUMENT for 20 s, then accepts them.
        for device in ["creator-iphone", "guest-iphone"] {
            try await system.fault(["status": 400, "token": CountdownSystem.fcmToken(device), "forSeconds": 20])
        }
        let cancelled = Date()
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        try await waitUntil(timeout: .seconds(10), "both end pushes refused") {
            try await system.query("SELECT count(*) AS n FROM countdown_end_attempts WHERE stream_id = 's1'")[0].decode("n", as: Int.self) == 2
        }
        let pushes = try await system.waitForPushes(timeout: .seconds(45), "both ends accepted once the fault cleared") {
            $0.events("end").count == 2
        }
        for end in pushes.events("end") {
            let delay = end.receivedAt.timeIntervalSince(cancelled)
            #expect(delay >= 19 && delay < 30, "end accepted \(delay) s after the cancel")
        }
        // The worker deletes the ended sessions after the answer the fake has recorded: wait for its write.
        try await waitUntil(timeout: .seconds(10), "the ended sessions deleted") {
            try await system.query("SELECT count(*) AS n FROM live_activity_sessions WHERE stream_id = 's1'")[0].decode("n", as: Int.self) == 0
        }
        await system.stop()
    }
}
