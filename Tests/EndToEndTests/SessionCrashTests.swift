import Foundation
import Postgres
import Testing
import TestSupport

/// SPEC 10.1: a worker SIGKILLed in the middle of an end or update fan-out repeats at most the pushes it had in
/// flight. Exactly: the sessions whose push the service had accepted and the killed worker had not yet recorded.
@Suite struct SessionCrashTests {
    static let sessions = 1500

    /// A stream `s1` with `sessions` iOS sessions of as many users.
    static func streamWithSessions() async throws -> CountdownSystem {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1", "PUSH_CONCURRENCY": "32"])
        try await system.user("creator")
        try await system.stream("s1", startsIn: 600, creator: "creator")
        try await system.db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(1, $1) i", [sessions])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token) SELECT 'd' || i, 'u' || i, 'ios', 'fcm-d' || i
                FROM generate_series(1, $1) i
                """, [sessions])
            try connection.execute("""
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token)
                SELECT 's1', 'd' || i, 'u' || i, md5('a' || i) || md5('b' || i) FROM generate_series(1, $1) i
                """, [sessions])
        }
        try await system.fault(["latencyMs": 40])
        return system
    }

    /// At most this many pushes of a fan-out are unrecorded at once: twice PUSH_CONCURRENCY with the gateway, one
    /// batch being recorded. (`sendEach` cuts batches of a quarter of PUSH_CONCURRENCY = 8, hands `batchesOut` =
    /// 2 * 32 / 8 = 8 of them to the gateway and the next one as an answered batch goes to be recorded, before that
    /// record commits: 8 * 8 + 8.)
    static let unrecordedBound = 2 * 32 + 8

    @Test func aKilledWorkerRepeatsOnlyTheEndsInFlight() async throws {
        let sessions = Self.sessions
        let system = try await Self.streamWithSessions()
        let doomed = try system.startWorker()
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        try await system.waitForPushes(timeout: .seconds(30), "the end fan-out under way") { $0.events("end").count >= 300 }
        doomed.kill9()
        // What the service took before the kill, and which of those sessions the killed worker had not deleted.
        try await system.waitForEarlierSends()
        let accepted = Set(try await system.pushes().events("end").compactMap(\.activityToken))
        let left = try await system.query("SELECT live_activity_token FROM live_activity_sessions WHERE stream_id = 's1'")
            .map { try $0.decode("live_activity_token", as: String.self) }
        let inFlight = left.filter(accepted.contains).count

        try system.startWorker()
        try await waitUntil(timeout: .seconds(90), "every session ended") {
            try await system.query("SELECT count(*) AS n FROM live_activity_sessions")[0].decode("n", as: Int.self) == 0
        }
        let ends = try await system.pushes().events("end")
        #expect(Set(ends.compactMap(\.activityToken)).count == sessions, "every session got its end")
        let duplicates = ends.count - sessions
        print("end crash: \(accepted.count) accepted before the kill, \(left.count) sessions left, \(inFlight) of them accepted; \(duplicates) duplicates")
        if duplicates != inFlight {
            print(doomed.log.split(separator: "\n").filter { $0.contains("warn") || $0.contains("error") || $0.contains("\"end\"") }.prefix(30).joined(separator: "\n"))
        }
        #expect(duplicates == inFlight, "repeated exactly the accepted ends the killed worker had not recorded")
        #expect(duplicates <= Self.unrecordedBound, "at most twice PUSH_CONCURRENCY out and one batch being recorded (got \(duplicates))")
        await system.stop()
    }

    @Test func aKilledWorkerRepeatsOnlyTheUpdatesInFlight() async throws {
        let sessions = Self.sessions
        let system = try await Self.streamWithSessions()
        let doomed = try system.startWorker()
        try await system.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '10 minutes' WHERE id = 's1'")
        let planned = try await system.plannedStart("s1")
        try await system.waitForPushes(timeout: .seconds(30), "the update fan-out under way") { $0.events("update").count >= 300 }
        doomed.kill9()
        try await system.waitForEarlierSends()
        let acceptedBeforeKill = try await system.pushes().events("update").compactMap(\.activityToken)
        let accepted = Set(acceptedBeforeKill)
        // No worker had died yet: the stream's update job (queued by the relay, at times by the reconciler too) ran once.
        #expect(acceptedBeforeKill.count == accepted.count, "no session got the update twice before the kill")
        let recorded = Set(try await system.query("""
            SELECT token FROM countdown_session_deliveries WHERE stream_id = 's1' AND channel = 'live_activity' AND shown_start_at = $1
            """, [planned]).map { try $0.decode("token", as: String.self) })
        let inFlight = accepted.subtracting(recorded).count

        let successor = try system.startWorker()
        try await waitUntil(timeout: .seconds(90), "every session shows the new start") {
            try await system.query("""
                SELECT count(*) AS n FROM countdown_session_deliveries WHERE stream_id = 's1' AND shown_start_at = $1
                """, [planned])[0].decode("n", as: Int.self) == sessions
        }
        let updates = try await system.pushes().events("update")
        #expect(Set(updates.compactMap(\.activityToken)).count == sessions, "every session got the update")
        let duplicates = updates.count - sessions
        print("update crash: \(accepted.count) accepted before the kill, \(recorded.count) recorded, \(inFlight) accepted and not recorded; \(duplicates) duplicates")
        // The bound is on what the killed worker had accepted and not recorded; a duplicate beyond those is a push
        // sent twice for another reason (say, accepted while its answer was lost), which the equality reports.
        #expect(inFlight <= Self.unrecordedBound, "at most twice PUSH_CONCURRENCY out and one batch being recorded (got \(inFlight))")
        #expect(duplicates == inFlight, "repeated exactly the accepted updates the killed worker had not recorded")
        if duplicates != inFlight {
            print(Self.duplicatesOutsideTheCrash(updates, acceptedBeforeKill: accepted, recordedBeforeKill: recorded,
                                                 logs: [("killed", doomed.log), ("successor", successor.log)]))
        }
        await system.stop()
    }

    /// The same for the Android countdown's ends (SPEC 10.4): the start ledger records each accepted end as its batch
    /// is answered.
    @Test func aKilledWorkerRepeatsOnlyTheAndroidEndsInFlight() async throws {
        let devices = 800
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "60", "REMINDER_LEAD_SECONDS": "1", "PUSH_CONCURRENCY": "32",
                                                          "ANDROID_COUNTDOWN": "on"])
        try await system.db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(0, $1) i", [devices])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token) SELECT 'd' || i, 'u' || i, 'android', 'fcm-d' || i
                FROM generate_series(1, $1) i
                """, [devices])
        }
        try await system.stream("s1", startsIn: 40, creator: "u0")
        try await system.execute("""
            INSERT INTO stream_participants (stream_id, user_id, role, position) SELECT 's1', 'u' || i, 'guest', i FROM generate_series(1, $1) i
            """, [devices])
        let doomed = try system.startWorker()
        try await system.waitForPushes(timeout: .seconds(120), "every countdown started") {
            Set($0.events("android_start").map(\.fcmToken)).count == devices
        }
        try await system.fault(["latencyMs": 40])
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        try await system.waitForPushes(timeout: .seconds(30), "the end fan-out under way") { $0.events("android_end").count >= 200 }
        doomed.kill9()
        try await system.waitForEarlierSends()
        let accepted = Set(try await system.pushes().events("android_end").map(\.fcmToken))
        let unrecorded = try await system.query("""
            SELECT 'fcm-' || device_id AS token FROM countdown_start_ledger WHERE stream_id = 's1' AND android_ended_at IS NULL
            """).map { try $0.decode("token", as: String.self) }
        let inFlight = unrecorded.filter(accepted.contains).count

        try system.startWorker()
        try await waitUntil(timeout: .seconds(90), "every countdown ended") {
            try await system.query("""
                SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id = 's1' AND android_ended_at IS NOT NULL
                """)[0].decode("n", as: Int.self) == devices
        }
        let ends = try await system.pushes().events("android_end")
        #expect(Set(ends.map(\.fcmToken)).count == devices, "every countdown got its end")
        let duplicates = ends.count - devices
        print("android end crash: \(accepted.count) accepted before the kill, \(unrecorded.count) not ended, \(inFlight) of them accepted; \(duplicates) duplicates")
        #expect(duplicates == inFlight, "repeated exactly the accepted ends the killed worker had not recorded")
        #expect(duplicates <= Self.unrecordedBound, "at most twice PUSH_CONCURRENCY out and one batch being recorded (got \(duplicates))")
        await system.stop()
    }

    /// Where the pushes sent twice beyond the crash window come from: how many tokens got more than one push, how many
    /// of those were recorded or accepted before the kill, and the workers' warnings, errors and retried pushes.
    static func duplicatesOutsideTheCrash(_ pushes: [RecordedPush], acceptedBeforeKill: Set<String>, recordedBeforeKill: Set<String>,
                                          logs: [(name: String, text: String)]) -> String {
        var sends: [String: Int] = [:]
        for push in pushes { sends[push.activityToken ?? "", default: 0] += 1 }
        let repeated = sends.filter { $0.value > 1 }
        var lines = ["pushed more than once: \(repeated.count) tokens (at most \(repeated.values.max() ?? 0) times); "
            + "\(repeated.keys.filter(recordedBeforeKill.contains).count) recorded before the kill, "
            + "\(repeated.keys.filter(acceptedBeforeKill.contains).count) accepted before the kill"]
        for (name, text) in logs {
            let notable = text.split(separator: "\n").filter { line in
                line.contains("\"warn\"") || line.contains("\"error\"") || line.contains("retry")
            }
            lines.append("\(name) worker: " + notable.suffix(20).joined(separator: "\n"))
        }
        return lines.joined(separator: "\n")
    }
}
