import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Testing
import TestSupport

@Suite(.serialized) struct ReminderFlowTests {
    @Test func remindersGoOnceToEveryDeviceOfActiveUsers() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "2", "REMINDER_LEAD_SECONDS": "4"])
        for user in ["creator", "fan", "fan2", "quiet", "gone"] { try await system.user(user, locale: user == "fan2" ? "en" : "tr") }
        try await system.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ('quiet', 'live_stream', false)")
        try await system.device("creator-iphone", user: "creator")
        try await system.device("fan-phone", user: "fan", platform: "android", pushToStart: false)
        try await system.device("fan-ipad", user: "fan")
        try await system.device("fan2-web", user: "fan2", platform: "web", pushToStart: false)
        try await system.device("quiet-phone", user: "quiet")
        try system.startWorker()
        try await system.stream("s1", title: "Gece", startsIn: 8, creator: "creator")
        for user in ["fan", "fan2", "quiet", "gone"] {
            try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', $1)", [user])
        }
        try await system.execute("UPDATE stream_reminders SET status = 'cancelled' WHERE user_id = 'gone'")
        let pushes = try await system.waitForPushes("three reminders") { $0.events("notification").count == 3 }
        let reminders = pushes.events("notification")
        #expect(Set(reminders.map(\.fcmToken)) == Set(["fan-phone", "fan-ipad", "fan2-web"].map(CountdownSystem.fcmToken)))
        #expect(reminders.allSatisfy { $0.data["type"] == "stream_reminder" && $0.data["streamId"] == "s1" })
        try await waitUntil(timeout: .seconds(10), "reminders marked sent after their pushes") {
            try await system.query("SELECT count(*) AS n FROM stream_reminders WHERE status = 'sent'")[0].decode("n", as: Int.self) == 2
        }
        let statuses = try await system.query("SELECT user_id, status FROM stream_reminders ORDER BY user_id")
        let byUser = Dictionary(uniqueKeysWithValues: try statuses.map { (try $0.decode("user_id", as: String.self), try $0.decode("status", as: String.self)) })
        #expect(byUser == ["fan": "sent", "fan2": "sent", "quiet": "active", "gone": "cancelled"])
        // A reminder created after its time but before the start goes out at once, once.
        try await system.user("latecomer")
        try await system.device("late-phone", user: "latecomer", platform: "android", pushToStart: false)
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', 'latecomer')")
        try await system.waitForPushes("reminder to the latecomer") { $0.events("notification").count == 4 }
        try await system.waitForIdle(timeout: .seconds(20), "the latecomer's reminder job done")
        #expect(try await system.pushes().events("notification").count == 4, "nobody is reminded twice")
        await system.stop()
    }

    @Test func aLargeFanOutIsSharedByEveryWorker() async throws {
        let users = 10_500  // six pages of reminders; a worker runs at most four at once
        // Reminders due 4 s after the start moves close, 40 s before the stream starts: on a loaded machine the
        // relay of 10,500 reminder rows and the fan-out must not run into the start (after which nothing is sent; a
        // CI run beside 23 other suites took 25-30 s for a page of 2,000 and its retried pages came too late with 20 s).
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "2", "REMINDER_LEAD_SECONDS": "40"])
        try await system.user("creator")
        try await system.execute("""
            INSERT INTO users (id, display_name) SELECT 'fan' || lpad(i::text, 5, '0'), 'Fan' FROM generate_series(1, $1) i
            """, [users])
        try await system.execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token)
            SELECT 'phone-' || id, id, 'android', 'fcm-phone-' || id FROM users WHERE id LIKE 'fan%'
            """)
        let workers = [try system.startWorker(), try system.startWorker()]
        // The reminders are written while the start is far away, then the start moves close.
        try await system.stream("big", startsIn: 3600, creator: "creator")
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 'big', id FROM users WHERE id LIKE 'fan%'")
        // The 10,500 new devices each queued a backfill (nothing to start yet): on a loaded machine they would
        // still be running when the reminder job comes due, so they finish first.
        try await system.waitForIdle("the devices' backfills")
        try await system.execute("UPDATE streams SET planned_start_at = now() + interval '44 seconds' WHERE id = 'big'")
        let pushes: [RecordedPush]
        do {
            pushes = try await system.waitForPushes(timeout: .seconds(60), "every reminder") { $0.events("notification").count >= users }
        } catch {
            let sent = try await system.query("SELECT status, count(*) AS n FROM stream_reminders GROUP BY status ORDER BY status")
                .map { "\(try $0.decode("status", as: String.self))=\(try $0.decode("n", as: Int.self))" }
            for (index, worker) in workers.enumerated() {
                Issue.record("worker \(index), reminders \(sent): \(worker.log.split(separator: "\n").suffix(25).joined(separator: "\n"))")
            }
            throw error
        }
        #expect(Set(pushes.events("notification").map(\.fcmToken)).count == users, "each user once")
        try await waitUntil(timeout: .seconds(10), "every reminder marked sent") {
            try await system.query("SELECT count(*) AS n FROM stream_reminders WHERE status = 'sent'")[0].decode("n", as: Int.self) == users
        }
        let pagesRun = workers.map { $0.log.components(separatedBy: "\"kind\":\"reminder_page\"").count - 1 }
        #expect(pagesRun.reduce(0, +) >= 3, "three pages: \(pagesRun)")
        #expect(pagesRun.allSatisfy { $0 > 0 }, "every worker took pages: \(pagesRun)")
        await system.stop()
    }
}
