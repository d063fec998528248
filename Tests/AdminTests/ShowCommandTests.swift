import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation
import Testing

@Suite struct ShowCommandTests {
    /// A stream inside its start window with an eligible creator, a guest with an iPhone and an Android phone,
    /// a guest who turned live-stream notifications off, and one whose iPhone lacks a push-to-start token;
    /// ledger rows, a running activity, reminders and queued jobs.
    static func arrange(_ fixture: AdminFixture) async throws {
        try await fixture.stream("sh1", startsIn: 1800, people: ["selin", "mert", "ayse", "can"])
        try await fixture.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('mert-pixel', 'mert', 'android', 'fcm-pixel')")
        try await fixture.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ('ayse', 'live_stream', false)")
        try await fixture.execute("UPDATE devices SET push_to_start_token = NULL WHERE device_id = 'can-phone'")
        try await fixture.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, attempts, sent_at) VALUES
                ('sh1', 'selin', 'selin-phone', 'sent', NULL, 1, now()),
                ('sh1', 'ayse', 'ayse-phone', 'skipped', 'preference_off', 0, NULL)
            """)
        try await fixture.session("sh1", user: "mert")
        try await fixture.reminder("sh1", user: "mert")
        try await fixture.reminder("sh1", user: "selin", status: "sent")
        try await fixture.queuePreStartJobs("sh1")
    }

    /// The rows of the table under `heading`, each split into its whitespace-separated words.
    static func table(_ text: String, under heading: String) -> [[String]] {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        let rows = lines[(start + 1)...].prefix { !$0.isEmpty }.map { $0.split(separator: " ").map(String.init) }
        return rows.first == ["(none)"] ? rows : Array(rows.dropFirst())
    }

    @Test func textShowsEverySection() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrange(fixture)
            let run = try await fixture.admin("show", "sh1")
            #expect(run.status == 0, "\(run)")
            let text = run.stdout
            #expect(text.hasPrefix("stream sh1: \"Stream sh1\"\n  status:        scheduled\n"))
            #expect(text.contains("  planned start: \(TimeArgument.format(try await fixture.plannedStart(of: "sh1")))"))

            #expect(Self.table(text, under: "participants:") == [
                ["selin", "Selin", "creator", "0"], ["mert", "Mert", "guest", "1"], ["ayse", "Ayse", "guest", "2"], ["can", "Can", "guest", "3"],
            ])
            #expect(Self.table(text, under: "devices") == [
                ["ayse", "ayse-phone", "ios", "preference_off"], ["can", "can-phone", "ios", "no_push_to_start_token"],
                ["mert", "mert-phone", "ios", "eligible"], ["mert", "mert-pixel", "android", "not_ios"],
                ["selin", "selin-phone", "ios", "eligible"],
            ])
            let jobs = Self.table(text, under: "pending jobs:")
            #expect(jobs.map { $0[0] } == StreamStatusCommandTests.preStartJobIDs("sh1"))
            for job in jobs { #expect(job.count == 5 && job[1] == "waiting" && job[2] == "in" && job[4] == "0", "\(job)") }

            let ledger = Self.table(text, under: "start ledger")
            #expect(ledger.map { Array($0.prefix(4)) } == [["ayse", "ayse-phone", "skipped", "preference_off"], ["selin", "selin-phone", "sent", "1"]])
            #expect(ledger.first?.suffix(2) == ["0", "—"])

            let sessions = Self.table(text, under: "runtime sessions")
            #expect(sessions.map { Array($0.prefix(3)) } == [["mert-phone", "mert", "…" + AdminFixture.sessionTokenTail]])
            #expect(!text.contains("activity-sh1-mert"), "session tokens are shown only by their last 8 characters")
            #expect(Self.table(text, under: "reminders:") == [["mert", "active"], ["selin", "sent"]])
            #expect(!text.contains("no start pushes yet"))
        }
    }

    @Test func jsonCarriesTheSameReport() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrange(fixture)
            let run = try await fixture.admin("show", "sh1", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == [
                "id", "title", "status", "plannedStartAt", "startWindowOpensAt", "databaseNow",
                "participants", "devices", "jobs", "ledger", "sessions", "reminders", "endDelivery",
            ])
            let report = try run.json(StreamReport.self)
            #expect(report.id == "sh1")
            #expect(report.title == "Stream sh1")
            #expect(report.status == "scheduled")
            let planned = try await fixture.plannedStart(of: "sh1")
            #expect(abs(report.plannedStartAt.timeIntervalSince(planned)) < 1)
            #expect(report.startWindowOpensAt == report.plannedStartAt.addingTimeInterval(-3600))
            #expect(abs(report.databaseNow.timeIntervalSince(planned.addingTimeInterval(-1800))) < 30)
            #expect(report.participants.map { "\($0.userID)/\($0.name)/\($0.role)/\($0.position)" }
                    == ["selin/Selin/creator/0", "mert/Mert/guest/1", "ayse/Ayse/guest/2", "can/Can/guest/3"])
            #expect(report.devices.map { "\($0.deviceID)=\($0.startEligibility)" }
                    == ["ayse-phone=preference_off", "can-phone=no_push_to_start_token", "mert-phone=eligible", "mert-pixel=not_ios", "selin-phone=eligible"])
            #expect(report.devices.first { $0.deviceID == "mert-pixel" }?.platform == "android")
            #expect(Set(report.jobs.map(\.id)) == Set(StreamStatusCommandTests.preStartJobIDs("sh1")))
            for job in report.jobs {
                #expect(job.state == "waiting")
                #expect(job.attempts == 0)
                #expect(job.lastError == "")
                let due = try #require(job.at)
                #expect(abs(due.timeIntervalSince(report.databaseNow) - 600) < 30)
            }
            #expect(report.ledger.map { "\($0.userID)/\($0.deviceID)/\($0.status)/\($0.reason ?? "-")/\($0.attempts)" }
                    == ["ayse/ayse-phone/skipped/preference_off/0", "selin/selin-phone/sent/-/1"])
            #expect(report.ledger[0].sentAt == nil)
            #expect(report.ledger[1].sentAt != nil)
            #expect(report.sessions.map { "\($0.deviceID)/\($0.userID ?? "-")/\($0.token)" } == ["mert-phone/mert/…\(AdminFixture.sessionTokenTail)"])
            #expect(report.reminders.map { "\($0.userID)=\($0.status)" } == ["mert=active", "selin=sent"])
        }
    }

    @Test func aFreshStreamSaysNoStartPushesYet() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("sh2", startsIn: 7200, people: ["selin"])
            let run = try await fixture.admin("show", "sh2")
            #expect(run.status == 0, "\(run)")
            #expect(Self.table(run.stdout, under: "pending jobs:") == [["(none)"]])
            #expect(Self.table(run.stdout, under: "start ledger") == [["(none)"]])
            #expect(run.stdout.hasSuffix("no start pushes yet: they go out when the start window opens\n"))
        }
    }

    @Test func unknownStreamAndBadArguments() async throws {
        try await AdminFixture.with { fixture in
            let unknown = try await fixture.admin("show", "nope", "--json")
            #expect(unknown.status == 1, "\(unknown)")
            #expect(unknown.errorLines == ["countdown-admin: stream nope does not exist"])
            #expect(unknown.stdout.isEmpty)
            for arguments in [["show"], ["show", "a", "b"], ["show", "a", "--limit", "3"]] {
                let run = try await fixture.admin(arguments)
                #expect(run.status == 2, "\(run)")
                #expect(run.stderr.contains("usage: countdown-admin show <streamId> [--json]"))
            }
        }
    }
}
