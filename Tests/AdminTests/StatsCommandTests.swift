import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import DelayQueue
import Foundation
import Testing
import TestSupport

@Suite struct StatsCommandTests {
    /// Streams in three statuses, recent and old start results, a sent reminder, one dead letter, three delayed
    /// jobs and one due now. The streams start in two hours: `stats` runs with `nearStart`, a two-hour lead, so
    /// their start windows are open and their decisions are the last hour's (`FleetStatsQueries`).
    static func arrange(_ fixture: AdminFixture) async throws {
        try await fixture.deadLetter("mystery:1")
        for (id, status) in [("st1", "scheduled"), ("st2", "scheduled"), ("st3", "cancelled"), ("st4", "started")] {
            try await fixture.stream(id, startsIn: 7200, people: ["selin", "mert"])
            if status != "scheduled" { try await fixture.execute("UPDATE streams SET status = $2 WHERE id = $1", [id, status]) }
        }
        try await fixture.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, updated_at) VALUES
                ('st1', 'selin', 'selin-phone', 'sent', NULL, now()),
                ('st1', 'mert', 'mert-phone', 'sent', NULL, now()),
                ('st2', 'selin', 'selin-phone', 'failed', 'unregistered: token gone', now()),
                ('st2', 'mert', 'mert-phone', 'skipped', 'preference_off', now()),
                ('st4', 'selin', 'selin-phone', 'sent', NULL, now() - interval '2 hours')
            """)
        try await fixture.reminder("st1", user: "mert", status: "sent")
        try await fixture.reminder("st2", user: "mert", status: "active")
        try await fixture.queuePreStartJobs("st1")
        let end = CountdownJob.end(stream: "st4")
        try await fixture.queue.enqueue(NewJob(id: end.id, kind: end.kind.rawValue, payload: end.payload, due: .now))
    }

    static let nearStart: [String: String?] = ["START_LEAD_SECONDS": "7200"]

    @Test func jsonCountsEverything() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrange(fixture)
            let run = try await fixture.admin(["stats", "--json"], environment: Self.nearStart)
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == [
                "delayed", "dueNow", "leased", "dead", "oldestLatenessSeconds", "jobsByKind", "outboxBacklog",
                "outboxOldestAgeSeconds", "recentStartResults", "remindersSentLastHour", "streamsByStatus", "paused", "pausedJobs",
                "pausedInRedisOnly", "recentAndroidStartResults", "androidEndsLastHour",
            ])
            let stats = try run.json(SystemStats.self)
            #expect(stats.delayed == 3)
            #expect(stats.dueNow == 1)
            #expect(stats.leased == 0)
            #expect(stats.dead == 1)
            #expect(stats.oldestLatenessSeconds >= 0 && stats.oldestLatenessSeconds < 60)
            var kinds = Dictionary(uniqueKeysWithValues: CountdownJob.Kind.allCases.map { ($0.rawValue, 0) })
            kinds.merge(["start": 1, "reminder": 1, "expire": 1, "end": 1]) { $1 }
            #expect(stats.jobsByKind == kinds)
            #expect(stats.outboxBacklog == (try await fixture.count("SELECT 1 FROM countdown_outbox")))
            #expect(stats.outboxBacklog > 0, "no relay runs here, so the triggers' rows wait")
            #expect(stats.outboxOldestAgeSeconds >= 0 && stats.outboxOldestAgeSeconds < 120)
            #expect(stats.recentStartResults == ["sent": 2, "failed:unregistered": 1, "skipped:preference_off": 1])
            #expect(stats.remindersSentLastHour == 1)
            #expect(stats.streamsByStatus == ["scheduled": 2, "cancelled": 1, "started": 1])
        }
    }

    @Test func textSummarisesOnALineEach() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrange(fixture)
            let run = try await fixture.admin(["stats"], environment: Self.nearStart)
            #expect(run.status == 0, "\(run)")
            let lines = run.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 10)
            #expect(lines.first == "queue:    delayed 3, due now 1, running 0, dead 1")
            #expect(lines.contains("jobs:     end=1 expire=1 reminder=1 start=1"))
            #expect(lines.contains("streams:  cancelled=1 scheduled=2 started=1"))
            #expect(lines.contains("starts in the last hour:    failed:unregistered=1 sent=2 skipped:preference_off=1"))
            #expect(lines.contains("reminders sent in the last hour: 1"))
            #expect(lines.contains("android starts in the last hour: none"))
            #expect(lines.last == "paused:   nothing")
        }
    }

    @Test func androidDeliveriesAndSkipsAreListed() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("sa1", startsIn: 1800, people: ["selin", "mert"])
            try await fixture.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
                    ('selin-pixel', 'selin', 'android', 'fcm-1'), ('mert-pixel', 'mert', 'android', NULL)
                """)
            try await fixture.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, android_seq, android_ended_at, android_end_reason) VALUES
                    ('sa1', 'selin', 'selin-phone', 'sent', NULL, 0, NULL, NULL),
                    ('sa1', 'selin', 'selin-pixel', 'sent', NULL, 3, now(), 'cancelled'),
                    ('sa1', 'mert', 'mert-pixel', 'skipped', 'no_fcm_token', 0, NULL, NULL)
                """)
            let stats = try await fixture.admin("stats", "--json").json(SystemStats.self)
            #expect(stats.recentStartResults == ["sent": 2, "skipped:no_fcm_token": 1])
            #expect(stats.recentAndroidStartResults == ["sent": 1, "skipped:no_fcm_token": 1])
            #expect(stats.androidEndsLastHour == ["cancelled": 1])
            let text = try await fixture.admin("stats").stdout
            #expect(text.contains("android starts in the last hour: sent=1 skipped:no_fcm_token=1"))
            #expect(text.contains("android countdowns ended in the last hour: cancelled=1"))
        }
    }

    /// The last hour's figures read only the streams near their start (a scan of the whole ledger takes seconds on a
    /// large fleet), and those whose planned start changed in the last hour.
    @Test func lastHourFiguresReadStreamsNearTheirStartAndThoseJustRescheduled() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("near", startsIn: 1800, people: ["selin"])
            try await fixture.stream("far", startsIn: 3 * 86_400, people: ["mert"])
            try await fixture.stream("past", startsIn: -4 * 3600, people: ["mert"])
            try await fixture.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, updated_at) VALUES
                    ('near', 'selin', 'selin-phone', 'sent', NULL, now()),
                    ('far', 'mert', 'mert-phone', 'sent', NULL, now()),
                    ('past', 'mert', 'mert-phone', 'skipped', 'too_late', now())
                """)
            try await fixture.reminder("near", user: "selin", status: "sent")
            try await fixture.reminder("far", user: "mert", status: "sent")
            var stats = try await fixture.admin("stats", "--json").json(SystemStats.self)
            #expect(stats.recentStartResults == ["sent": 1])
            #expect(stats.remindersSentLastHour == 1)

            // Moved far ahead after its decisions: the planned-start history names it.
            try await fixture.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '1 day' WHERE id = 'past'")
            stats = try await fixture.admin("stats", "--json").json(SystemStats.self)
            #expect(stats.recentStartResults == ["sent": 1, "skipped:too_late": 1])
        }
    }

    @Test func anEmptySystem() async throws {
        try await AdminFixture.with { fixture in
            let stats = try await fixture.admin("stats", "--json").json(SystemStats.self)
            #expect(stats.delayed + stats.dueNow + stats.leased + stats.dead == 0)
            #expect(stats.oldestLatenessSeconds == 0)
            #expect(stats.outboxBacklog == 0)
            #expect(stats.recentStartResults.isEmpty)
            #expect(stats.streamsByStatus.isEmpty)
            #expect(try await fixture.admin("stats").stdout.contains("streams:  none"))
        }
    }

    @Test func badArgumentsAndAnUnreachableRedis() async throws {
        try await AdminFixture.with { fixture in
            let extra = try await fixture.admin("stats", "now")
            #expect(extra.status == 2, "\(extra)")
            #expect(extra.stderr.contains("usage: countdown-admin stats [--json]"))

            let badURL = try await fixture.admin(["stats"], environment: ["REDIS_URL": "http://localhost:6379"])
            #expect(badURL.status == 2, "\(badURL)")
            #expect(badURL.errorLines.first?.hasPrefix("countdown-admin: REDIS_URL: ") == true)

            let unreachable = try await fixture.admin(["stats"], environment: ["REDIS_URL": "redis://127.0.0.1:1"])
            #expect(unreachable.status == 1, "\(unreachable)")
            #expect(unreachable.errorLines.count == 1, "\(unreachable)")
            #expect(unreachable.stdout.isEmpty)

            // Credentials refused are a misconfiguration: exit 2, one line naming the variable, no password.
            let guarded = try await ThrowawayRedis.start(extraArguments: ["--requirepass", "right"])
            let refused = try await fixture.admin(["stats"], environment: ["REDIS_URL": "redis://:not-it@127.0.0.1:\(guarded.port)/0"])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.errorLines.count == 1 && refused.errorLines.first?.contains("check REDIS_URL") == true, "\(refused)")
            #expect(!refused.stderr.contains("not-it"))
            await guarded.stopInBackground()
        }
    }
}
