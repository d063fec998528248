import Foundation
import Testing
import TestSupport

/// SPEC 10.4 end to end: with `ANDROID_COUNTDOWN=on` a real worker sends an Android guest the countdown's start at
/// T-lead, an update after a reschedule and the end, as FCM data messages the fake FCM checks as FCM would and
/// records as `android_start|update|end`; the guest's iPhone peer is served as before.
@Suite(.serialized) struct AndroidCountdownTests {
    @Test func anAndroidGuestGetsStartUpdateAndEnd() async throws {
        let system = try await CountdownSystem(settings: ["ANDROID_COUNTDOWN": "on", "START_LEAD_SECONDS": "30"])
        try await system.user("creator", name: "Selin Kaya")
        try await system.user("guest", name: "Mert Demir", locale: "en")
        try await system.device("creator-iphone", user: "creator")
        try await system.device("guest-pixel", user: "guest", platform: "android", pushToStart: false)
        try system.startWorker()
        try await system.stream("s1", title: "Gece", startsIn: 20, creator: "creator", guests: ["guest"])
        let started = try await system.waitForPushes("an iOS and an Android start") {
            $0.events("start").count == 1 && $0.events("android_start").count == 1
        }
        let start = try #require(started.events("android_start").first)
        #expect(start.fcmToken == CountdownSystem.fcmToken("guest-pixel"))
        #expect(start.data["seq"] == "1" && start.data["role"] == "guest" && start.data["creatorName"] == "Selin Kaya • Mert Demir")
        #expect(start.data["body"]?.contains("starts in") == true, "the guest's language: \(start.data)")

        try await system.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '10 minutes' WHERE id = 's1'")
        let updated = try await system.waitForPushes("the Android update") { $0.events("android_update").count == 1 }
        let planned = try await system.plannedStart("s1")
        #expect(updated.events("android_update").first?.data["scheduledStartAt"] == String(Int(planned.timeIntervalSince1970.rounded(.down))))
        #expect(updated.events("android_update").first?.data["seq"] == "2")
        // The fake records the update when it receives it; the worker writes down its answer (and lets go of the
        // countdown it claimed) a moment later. An end job that came in between would find the countdown claimed by
        // a running job and look again only after the claim time (30 s), past this test's waits.
        try await waitUntil(timeout: .seconds(10), "the update recorded") {
            try await system.query("""
                SELECT 1 FROM countdown_start_ledger l JOIN streams s ON s.id = l.stream_id
                WHERE l.device_id = 'guest-pixel' AND l.android_claimed_by IS NULL AND l.android_accepted_start = s.planned_start_at
                """).count == 1
        }

        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        let ended = try await system.waitForPushes("the Android end") { $0.events("android_end").count == 1 }
        let end = try #require(ended.events("android_end").first)
        #expect(end.data["endedReason"] == "cancelled" && end.data["seq"] == "3" && end.data["deepLink"] == "allmine://home")
        try await waitUntil(timeout: .seconds(10), "the countdown recorded as ended") {
            try await system.query("SELECT android_end_reason FROM countdown_start_ledger WHERE device_id = 'guest-pixel'")
                .first?.decode("android_end_reason", as: String?.self) == "cancelled"
        }
        #expect(try await system.pushes().events("android_end").count == 1, "once")
        await system.stop()
    }

    @Test func aPausedEndKindHoldsTheAndroidEndUntilResumed() async throws {
        let system = try await CountdownSystem(settings: ["ANDROID_COUNTDOWN": "on", "START_LEAD_SECONDS": "30"])
        try await system.user("creator")
        try await system.device("creator-pixel", user: "creator", platform: "android", pushToStart: false)
        try system.startWorker()
        try await system.stream("s1", startsIn: 20, creator: "creator")
        try await system.waitForPushes("the Android start") { $0.events("android_start").count == 1 }
        try await waitUntil(timeout: .seconds(10), "the start settled") {
            try await system.query("SELECT status FROM countdown_start_ledger WHERE device_id = 'creator-pixel'").first?
                .decode("status", as: String.self) == "sent"
        }
        let paused = try await system.admin(["pause", "--kind", "end", "--reason", "test", "--yes"])
        #expect(paused.status == 0, "\(paused.output)")
        try await system.execute("UPDATE streams SET status = 'started' WHERE id = 's1'")
        try await waitUntil(timeout: .seconds(10), "the end job queued") {
            try await system.admin(["show", "s1", "--json"]).output.contains("end:s1")
        }
        try await waitUntil(timeout: .seconds(10), "the due end job held aside by a claim") { try await system.queueStats().paused == 1 }
        #expect(try await system.pushes().events("android_end").isEmpty, "held while end is paused")
        let resumed = try await system.admin(["resume", "--kind", "end"])
        #expect(resumed.status == 0, "\(resumed.output)")
        let ended = try await system.waitForPushes("the Android end after resume") { $0.events("android_end").count == 1 }
        #expect(ended.events("android_end").first?.data["endedReason"] == "started")
        await system.stop()
    }
}
