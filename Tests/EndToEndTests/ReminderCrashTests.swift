import Foundation
import Postgres
import Testing
import TestSupport

/// SPEC 10.1: a worker SIGKILLed in the middle of a reminder fan-out repeats at most the reminders it had in flight.
/// Exactly: the devices of the chunks the killed worker still held, not recorded as reached, whose push the service
/// had accepted.
@Suite struct ReminderCrashTests {
    @Test func aKilledWorkerRepeatsOnlyTheRemindersInFlight() async throws {
        // COUNTDOWN_REMINDER_CRASH_USERS scales it (docs/reliability.md records a 20,000-device run).
        let users = ProcessInfo.processInfo.environment["COUNTDOWN_REMINDER_CRASH_USERS"].flatMap(Int.init) ?? 1500
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "300", "PUSH_CONCURRENCY": "32"])
        try await system.user("creator")
        try await system.db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(1, $1) i", [users])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token) SELECT 'd' || i, 'u' || i, 'android', 'fcm-d' || i
                FROM generate_series(1, $1) i
                """, [users])
        }
        try await system.stream("s1", startsIn: 120, creator: "creator")
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 's1', 'u' || i FROM generate_series(1, $1) i", [users])
        try await system.fault(["latencyMs": 40])
        let doomed = try system.startWorker()
        try await system.waitForPushes(timeout: .seconds(30), "the fan-out under way") { $0.events("notification").count >= 300 }
        doomed.kill9()
        // What the service took before the kill (the fake records a send when its latency is over, whether or not
        // the sender is still there), and what the killed worker left claimed.
        try await system.waitForEarlierSends()
        let accepted = Set(try await system.pushes().events("notification").map(\.fcmToken))
        // The devices of the users in the chunks the killed worker still held whose answer it had not recorded.
        let claimed = try await system.query("""
            SELECT d.device_id FROM countdown_reminder_claims c
            JOIN stream_reminders r ON r.stream_id = c.stream_id AND r.user_id BETWEEN c.first_user AND c.last_user AND r.status = 'active'
            JOIN devices d ON d.user_id = r.user_id
            WHERE c.claimed_until >= now()
              AND NOT EXISTS (SELECT 1 FROM countdown_reminder_sends s WHERE s.claim_id = c.id AND d.device_id = ANY(s.devices))
            """).map { "fcm-" + (try $0.decode("device_id", as: String.self)) }
        let inFlight = claimed.filter(accepted.contains).count

        try system.startWorker()
        try await waitUntil(timeout: .seconds(60 + users / 100), "every reminder sent") {
            try await system.query("SELECT count(*) AS n FROM stream_reminders WHERE status = 'sent'")[0].decode("n", as: Int.self) == users
        }
        let pushes = try await system.pushes().events("notification")
        #expect(Set(pushes.map(\.fcmToken)).count == users, "every device got the reminder")
        let duplicates = pushes.count - users
        print("reminder crash: \(accepted.count) accepted before the kill, \(claimed.count) left claimed, \(inFlight) of them accepted; \(duplicates) duplicates")
        if duplicates != inFlight { print(doomed.log.split(separator: "\n").filter { $0.contains("warn") || $0.contains("error") }.prefix(20).joined(separator: "\n")) }
        #expect(duplicates == inFlight, "repeated exactly the accepted pushes the killed worker had not recorded")
        #expect(duplicates <= 2 * 32, "at most the two PUSH_CONCURRENCY a fan-out hands the gateway at once (got \(duplicates))")
        await system.stop()
    }
}
