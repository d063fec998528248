import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Testing
import TestSupport

/// SPEC section 5, start rows: T-60 starts, eligibility, one start per (stream, user, device), backfills.
@Suite(.serialized) struct StartFlowTests {
    @Test func startGoesOutAtTMinusLeadNotBefore() async throws {
        let system = try await CountdownSystem()
        try await system.user("creator", name: "Selin Kaya")
        try await system.user("guest", name: "Mert Demir", locale: "en")
        try await system.device("creator-phone", user: "creator")
        try await system.device("guest-phone", user: "guest")
        try system.startWorker()
        // START_LEAD_SECONDS=5: the window opens 4 s from now.
        try await system.stream("s1", title: "Akşam", startsIn: 9, creator: "creator", guests: ["guest"])
        let planned = try await system.plannedStart("s1")
        let due = planned.addingTimeInterval(-5)
        let pushes = try await system.waitForPushes("two start pushes") { $0.events("start").count == 2 }
        for push in pushes.events("start") {
            #expect(push.receivedAt >= due.addingTimeInterval(-0.05), "start must not go out before T-lead")
            #expect(push.receivedAt < due.addingTimeInterval(2), "start should go out right at T-lead")
            #expect(push.contentState["scheduledStartAt"] as? Int == Int(planned.timeIntervalSince1970.rounded(.down)))
            #expect(push.attributes["creatorName"] as? String == "Selin Kaya • Mert Demir")
        }
        let roles = Dictionary(uniqueKeysWithValues: pushes.events("start").map { ($0.fcmToken, $0.attributes["role"] as? String ?? "") })
        #expect(roles == [CountdownSystem.fcmToken("creator-phone"): "creator", CountdownSystem.fcmToken("guest-phone"): "guest"])
        let guestAlert = pushes.events("start").first { $0.fcmToken == CountdownSystem.fcmToken("guest-phone") }?.aps["alert"] as? [String: String]
        #expect(guestAlert?["body"]?.contains("starts in") == true, "the guest's alert is in English: \(String(describing: guestAlert))")
        await system.stop()
    }

    @Test func onlyEligibleDevicesOfParticipantsGetStarts() async throws {
        let system = try await CountdownSystem()
        for user in ["creator", "guest", "quiet", "stranger"] { try await system.user(user) }
        try await system.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ('quiet', 'live_stream', false)")
        try await system.device("creator-iphone", user: "creator")
        try await system.device("creator-pixel", user: "creator", platform: "android", pushToStart: false)
        try await system.device("guest-iphone", user: "guest")
        try await system.device("guest-no-pts", user: "guest", pushToStart: false)
        try await system.device("guest-no-fcm", user: "guest", fcm: false)
        try await system.device("quiet-iphone", user: "quiet")
        try await system.device("stranger-iphone", user: "stranger")
        try await system.execute("UPDATE devices SET push_to_start_token = '' WHERE device_id = 'guest-no-pts'")
        try system.startWorker()
        try await system.stream("s1", startsIn: 3, creator: "creator", guests: ["guest", "quiet"])
        try await system.waitForPushes("starts to the two eligible devices") { $0.events("start").count >= 2 }
        // Give a wrong extra push time to show up before checking the exact set.
        try await waitUntil(timeout: .seconds(10), "ledger settled") {
            try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE status IN ('pending', 'sending')")[0].decode("n", as: Int.self) == 0
        }
        let tokens = Set(try await system.pushes().events("start").map(\.fcmToken))
        #expect(tokens == [CountdownSystem.fcmToken("creator-iphone"), CountdownSystem.fcmToken("guest-iphone")])
        let skipped = try await system.query("SELECT device_id, reason FROM countdown_start_ledger WHERE status = 'skipped' ORDER BY device_id")
        let reasons = Dictionary(uniqueKeysWithValues: try skipped.map { (try $0.decode("device_id", as: String.self), try $0.decode("reason", as: String.self)) })
        #expect(reasons == ["creator-pixel": "not_ios", "guest-no-pts": "no_push_to_start_token", "guest-no-fcm": "no_fcm_token",
                            "quiet-iphone": "preference_off"])
        await system.stop()
    }

    @Test func lateTokenAndLateGuestAreBackfilledOnce() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "60"])
        for user in ["creator", "late-guest"] { try await system.user(user) }
        try await system.device("creator-iphone", user: "creator", pushToStart: false)
        try await system.device("guest-iphone", user: "late-guest")
        try system.startWorker()
        try await system.stream("s1", startsIn: 40, creator: "creator")
        // The creator's device has no push-to-start token yet: nothing goes out.
        try await waitUntil(timeout: .seconds(10), "start job ran") {
            try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id = 's1'")[0].decode("n", as: Int.self) == 1
        }
        #expect(try await system.pushes().isEmpty)
        try await system.execute("UPDATE devices SET push_to_start_token = $1 WHERE device_id = 'creator-iphone'",
                                 [CountdownSystem.pushToStartToken("creator-iphone")])
        try await system.waitForPushes("backfilled start to the creator") { $0.events("start").count == 1 }
        try await system.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('s1', 'late-guest', 'guest', 1)")
        try await system.waitForPushes("start to the late guest") { $0.events("start").count == 2 }
        // Registering the same token again changes nothing: still one start per device.
        try await system.execute("UPDATE devices SET fcm_token = 'fcm-rotated' WHERE device_id = 'guest-iphone'")
        try await waitUntil(timeout: .seconds(5), "backfill after rotation ran") {
            try await system.query("SELECT count(*) AS n FROM countdown_outbox")[0].decode("n", as: Int.self) == 0
        }
        try await system.waitForIdle(timeout: .seconds(10), "the rotation's backfill job done")
        #expect(try await system.pushes().events("start").count == 2)
        await system.stop()
    }
}
