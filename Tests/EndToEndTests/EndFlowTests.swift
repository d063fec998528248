import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Testing
import TestSupport

/// SPEC section 5, end rows: every ending status ends every runtime session with the right reason and link.
@Suite(.serialized) struct EndFlowTests {
    /// A stream inside its window (reminder not yet due) with starts sent and two runtime sessions registered.
    func runningStream(_ system: CountdownSystem, id: String = "s1", startsIn: Double = 20) async throws {
        try await system.user("creator", name: "Selin Kaya")
        try await system.user("guest", name: "Mert Demir", locale: "en")
        try await system.user("fan")
        try await system.device("creator-iphone", user: "creator")
        try await system.device("guest-iphone", user: "guest")
        try await system.device("fan-phone", user: "fan", platform: "android", pushToStart: false)
        try await system.stream(id, title: "Gece", startsIn: startsIn, creator: "creator", guests: ["guest"])
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id) VALUES ($1, 'fan')", [id])
        try await system.waitForPushes("starts") { $0.events("start").count == 2 }
        try await system.session(stream: id, device: "creator-iphone", user: "creator")
        try await system.session(stream: id, device: "guest-iphone", user: "guest")
    }

    func sessionCount(_ system: CountdownSystem) async throws -> Int {
        try await system.query("SELECT count(*) AS n FROM live_activity_sessions")[0].decode("n")
    }

    @Test(arguments: ["ready", "started", "cancelled"])
    func statusChangeEndsEverySession(status: String) async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        try system.startWorker()
        try await runningStream(system)
        try await system.execute("UPDATE streams SET status = $1 WHERE id = 's1'", [status])
        let pushes = try await system.waitForPushes("two end pushes") { $0.events("end").count == 2 }
        let expectedLink = status == "cancelled" ? "allmine://home" : "allmine://live-stream/s1"
        for end in pushes.events("end") {
            #expect(end.contentState["endedReason"] as? String == status)
            #expect(end.contentState["displayState"] as? String == "ended")
            #expect(end.contentState["deepLink"] as? String == expectedLink)
            #expect(end.contentState["deepLinkUrl"] as? String == expectedLink)
            #expect((end.aps["dismissal-date"] as? Int ?? 0) > Int(Date().timeIntervalSince1970))
        }
        #expect(Set(pushes.events("end").compactMap(\.activityToken))
                == [CountdownSystem.sessionToken("s1", "creator-iphone"), CountdownSystem.sessionToken("s1", "guest-iphone")])
        try await waitUntil(timeout: .seconds(10), "sessions deleted after their end push") { try await sessionCount(system) == 0 }
        let reminder: String = try await system.query("SELECT status FROM stream_reminders WHERE stream_id = 's1'")[0].decode("status")
        #expect(reminder == (status == "cancelled" ? "cancelled" : "active"))
        // The reminder job was removed with the other pre-start jobs: no reminder ever goes out.
        try await waitUntil(timeout: .seconds(10), "the reminder job removed") { try await system.queuedJobs(kind: "reminder").isEmpty }
        #expect(try await system.pushes().events("notification").isEmpty)
        await system.stop()
    }

    /// Two activities of one device and stream (a repeated push-to-start): the older one kept in
    /// `countdown_activity_sessions` (SPEC 12.1) gets the end as well as the newest one.
    @Test func bothActivitiesOfADeviceGetTheEnd() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        try system.startWorker()
        try await runningStream(system)
        let older = CountdownSystem.sessionToken("s1", "creator-iphone-older")
        try await system.execute("UPDATE live_activity_sessions SET activity_id = 'B' WHERE device_id = 'creator-iphone'")
        try await system.execute("""
            INSERT INTO countdown_activity_sessions (stream_id, device_id, activity_id, user_id, live_activity_token)
            VALUES ('s1', 'creator-iphone', 'A', 'creator', $1)
            """, [older])
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        let pushes = try await system.waitForPushes("three end pushes") { $0.events("end").count == 3 }
        #expect(Set(pushes.events("end").compactMap(\.activityToken))
                == [CountdownSystem.sessionToken("s1", "creator-iphone"), older, CountdownSystem.sessionToken("s1", "guest-iphone")])
        try await waitUntil(timeout: .seconds(10), "every activity's session deleted after its end push") {
            try await system.query("""
                SELECT (SELECT count(*) FROM live_activity_sessions) + (SELECT count(*) FROM countdown_activity_sessions) AS n
                """)[0].decode("n", as: Int.self) == 0
        }
        await system.stop()
    }

    /// A takeover (the API moves the previous user's sessions to `countdown_retired_sessions` in its transaction;
    /// here the same rows are written directly) ends those activities at once while the stream runs on, and a
    /// session-end job lost with Redis is rebuilt by the reconciler.
    @Test func sessionsRetiredByATakeoverAreEndedAtOnce() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        let worker = try system.startWorker()
        try await runningStream(system)
        let token = CountdownSystem.sessionToken("s1", "guest-iphone")
        try await system.execute("""
            WITH gone AS (DELETE FROM live_activity_sessions WHERE device_id = 'guest-iphone' RETURNING stream_id, device_id, live_activity_token, user_id)
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
            SELECT stream_id, device_id, live_activity_token, user_id, 'takeover' FROM gone
            """)
        let pushes = try await system.waitForPushes("the retired session's end push") { !$0.events("end").isEmpty }
        let end = try #require(pushes.events("end").first)
        #expect(pushes.events("end").count == 1)
        #expect(end.activityToken == token)
        #expect(end.contentState["endedReason"] as? String == "cancelled")
        #expect(end.aps["dismissal-date"] as? Int == end.aps["timestamp"] as? Int, "dismissed at once")
        try await waitUntil(timeout: .seconds(10), "the retired session deleted after its end push") {
            try await system.query("SELECT count(*) AS n FROM countdown_retired_sessions")[0].decode("n", as: Int.self) == 0
        }
        #expect(try await sessionCount(system) == 1, "the creator's activity runs on")

        // The same once more with the worker stopped and Redis losing the job: the reconciler brings it back.
        worker.terminate()
        #expect(await worker.waitForExit(timeout: 10) == 0)
        try await system.execute("""
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
            VALUES ('s1', 'guest-iphone', 'abcdef01', 'guest', 'takeover')
            """)
        try await system.execute("DELETE FROM countdown_outbox")
        let dry = try await system.admin(["reconcile", "--dry-run", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(dry.output.utf8)) as? [String: Any]
        #expect((report?["added"] as? [String: Int])?["session_end"] == 1, "\(dry.output)")
        #expect(try await system.admin(["reconcile"]).status == 0)
        try system.startWorker()
        _ = try await system.waitForPushes("the rebuilt end push") { $0.events("end").contains { $0.activityToken == "abcdef01" } }
        await system.stop()
    }

    @Test func adminCancelDoesWhatTheAPIDoes() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "REMINDER_LEAD_SECONDS": "1"])
        try system.startWorker()
        try await runningStream(system)
        let result = try await system.admin(["cancel", "s1", "--yes", "--json"])
        #expect(result.status == 0, "\(result.output)")
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        #expect(report?["status"] as? String == "cancelled")
        #expect(report?["remindersCancelled"] as? Int == 1)
        #expect(report?["sessionsToEnd"] as? Int == 2)
        #expect((report?["jobsRemoved"] as? Int ?? 0) >= 2, "reminder and expire jobs were pending")
        try await system.waitForPushes("end pushes") { $0.events("end").count == 2 }
        let again = try await system.admin(["cancel", "s1", "--yes"])
        #expect(again.status == 0 && again.output.contains("already cancelled"), "\(again.output)")
        let unknown = try await system.admin(["cancel", "nope", "--yes"])
        #expect(unknown.status == 1 && unknown.output.contains("does not exist"))
        let usage = try await system.admin(["cancel"])
        #expect(usage.status == 2)
        await system.stop()
    }

    @Test func expireJobEndsAStreamThatNeverStarted() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30", "EXPIRE_AFTER_SECONDS": "2"])
        try system.startWorker()
        try await runningStream(system, startsIn: 3)
        let pushes = try await system.waitForPushes(timeout: .seconds(20), "end pushes after expiry") { $0.events("end").count == 2 }
        #expect(pushes.events("end").allSatisfy { $0.contentState["endedReason"] as? String == "expired" })
        let status: String = try await system.query("SELECT status FROM streams WHERE id = 's1'")[0].decode("status")
        #expect(status == "expired")
        await system.stop()
    }

    @Test func sessionRegisteredAfterTheEndIsEndedAtOnce() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30"])
        try system.startWorker()
        try await runningStream(system)
        try await system.execute("UPDATE streams SET status = 'started' WHERE id = 's1'")
        try await system.waitForPushes("end pushes") { $0.events("end").count == 2 }
        try await system.device("late-ipad", user: "guest")
        try await system.session(stream: "s1", device: "late-ipad", user: "guest")
        let pushes = try await system.waitForPushes("end push to the late session") { $0.events("end").count == 3 }
        #expect(pushes.events("end").last?.activityToken == CountdownSystem.sessionToken("s1", "late-ipad"))
        try await waitUntil(timeout: .seconds(10), "late session deleted") { try await sessionCount(system) == 0 }
        await system.stop()
    }

    /// SPEC 10.1: the start went out, the stream moved, then the app registered its runtime token: that session gets
    /// an update with the current start within 3 s of its registration.
    @Test func aSessionRegisteredAfterARescheduleGetsTheCurrentStartWithinThreeSeconds() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30"])
        try system.startWorker()
        try await system.user("creator", name: "Selin Kaya")
        try await system.device("creator-iphone", user: "creator")
        try await system.stream("s1", title: "Gece", startsIn: 20, creator: "creator")
        try await system.waitForPushes("the start") { $0.events("start").count == 1 }
        try await system.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '20 seconds' WHERE id = 's1'")
        let planned = try await system.plannedStart("s1")
        let registered = Date()
        try await system.session(stream: "s1", device: "creator-iphone", user: "creator")
        let pushes = try await system.waitForPushes(timeout: .seconds(10), "the update to the late session") { $0.events("update").count == 1 }
        let update = try #require(pushes.events("update").first)
        #expect(update.activityToken == CountdownSystem.sessionToken("s1", "creator-iphone"))
        #expect(update.contentState["scheduledStartAt"] as? Int == Int(planned.timeIntervalSince1970))
        #expect(update.receivedAt.timeIntervalSince(registered) < 3, "accepted \(update.receivedAt.timeIntervalSince(registered)) s after the registration")
        await system.stop()
    }

    @Test func rescheduleMovesJobsAndUpdatesRunningActivities() async throws {
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "30"])
        try system.startWorker()
        try await runningStream(system)
        try await system.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 hour' WHERE id = 's1'")
        let planned = try await system.plannedStart("s1")
        let pushes = try await system.waitForPushes("update pushes") { $0.events("update").count == 2 }
        for update in pushes.events("update") {
            #expect(update.contentState["scheduledStartAt"] as? Int == Int(planned.timeIntervalSince1970))
            #expect(update.contentState["displayState"] as? String == "countdown")
        }
        let show = try await system.admin(["show", "s1", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any]
        let jobs = report?["jobs"] as? [[String: Any]] ?? []
        #expect(jobs.contains { ($0["id"] as? String) == "expire:s1" && ($0["state"] as? String) == "waiting" })
        #expect(jobs.contains { ($0["id"] as? String) == "start:s1" }, "a new start job for the new time")
        await system.stop()
    }
}
