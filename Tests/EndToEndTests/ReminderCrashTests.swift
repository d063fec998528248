import Foundation
import Postgres
import Testing
import TestSupport

/// SPEC 10.1, 12.1: a worker SIGKILLed in the middle of a reminder fan-out repeats at most the reminders it had open,
/// one per slot (`PUSH_CONCURRENCY`). Exactly: the devices of the chunks the killed worker still held, not recorded as
/// reached, whose push the service had accepted.
@Suite struct ReminderCrashTests {
    @Test func aKilledWorkerRepeatsOnlyTheRemindersInFlight() async throws {
        // COUNTDOWN_REMINDER_CRASH_USERS (or COUNTDOWN_CRASH_FULL=1: 20,000) scales it and COUNTDOWN_CRASH_RUNS repeats it
        // (docs/reliability.md records five 20,000-device runs).
        for run in 1...CrashDuplicateTests.runs { try await Self.run(run) }
    }

    static func run(_ run: Int) async throws {
        let slots = CrashDuplicateTests.slots
        let users = ProcessInfo.processInfo.environment["COUNTDOWN_REMINDER_CRASH_USERS"].flatMap(Int.init) ?? (CrashDuplicateTests.full ? 20000 : 1500)
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "300", "PUSH_CONCURRENCY": "\(slots)"])
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
        try await system.waitForPushes(timeout: .seconds(180), "the fan-out under way") { $0.events("notification").count >= users / 5 }
        doomed.kill9()
        // What the service took before the kill (the fake records a send when its latency is over, whether or not
        // the sender is still there), and what the killed worker left claimed.
        try await system.waitForEarlierSends()
        let acceptedBefore = try await system.pushes().events("notification")
        let accepted = Set(acceptedBefore.map(\.fcmToken))
        // The devices of the users in the chunks the killed worker still held whose answer it had not recorded (its
        // claims, expired or not: on a loaded machine they may run out, 2 x JOB_LEASE_SECONDS, before this reads them;
        // no other worker runs yet, and a chunk marked sent has no active reminder left).
        let claimed = try await system.query("""
            SELECT d.device_id FROM countdown_reminder_claims c
            JOIN stream_reminders r ON r.stream_id = c.stream_id AND r.user_id BETWEEN c.first_user AND c.last_user AND r.status = 'active'
            JOIN devices d ON d.user_id = r.user_id
            WHERE NOT EXISTS (SELECT 1 FROM countdown_reminder_sends s WHERE s.claim_id = c.id AND d.device_id = ANY(s.devices))
            """).map { "fcm-" + (try $0.decode("device_id", as: String.self)) }
        let inFlight = claimed.filter(accepted.contains).count

        try system.startWorker()
        try await waitUntil(timeout: .seconds(60 + users / 100), "every reminder sent") {
            try await system.query("SELECT count(*) AS n FROM stream_reminders WHERE status = 'sent'")[0].decode("n", as: Int.self) == users
        }
        let pushes = try await system.pushes().events("notification")
        #expect(Set(pushes.map(\.fcmToken)).count == users, "every device got the reminder")
        let duplicates = pushes.count - users
        print("crash duplicates, reminders, run \(run): \(users) reminders, killed after \(acceptedBefore.count) accepted; \(claimed.count) left claimed, "
              + "\(inFlight) of them accepted (requests open); \(duplicates) duplicates")
        if duplicates != inFlight { print(doomed.log.split(separator: "\n").filter { $0.contains("warn") || $0.contains("error") }.prefix(20).joined(separator: "\n")) }
        #expect(duplicates == inFlight, "repeated exactly the accepted pushes the killed worker had not recorded")
        #expect(inFlight <= slots, "at most one open request per slot (PUSH_CONCURRENCY \(slots)), got \(inFlight)")
        await system.stop()
    }
}
