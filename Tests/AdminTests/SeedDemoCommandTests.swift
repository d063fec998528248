import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation
import Testing

@Suite struct SeedDemoCommandTests {
    static let tables: [(String, Int)] = [
        ("SELECT 1 FROM users WHERE id LIKE 'demo-%'", 5),
        ("SELECT 1 FROM devices WHERE device_id LIKE 'demo-%'", 7),
        ("SELECT 1 FROM streams WHERE id LIKE 'demo-%'", 3),
        ("SELECT 1 FROM stream_participants WHERE stream_id LIKE 'demo-%'", 6),
        ("SELECT 1 FROM stream_reminders WHERE stream_id LIKE 'demo-%' AND status = 'active'", 3),
        ("SELECT 1 FROM notification_preferences WHERE user_id LIKE 'demo-%' AND NOT enabled", 1),
    ]

    static func expectDemoRows(_ fixture: AdminFixture) async throws {
        for (sql, expected) in tables {
            #expect(try await fixture.count(sql) == expected, "\(sql)")
        }
    }

    /// Seconds from the database's now to each demo stream's planned start.
    static func leads(_ fixture: AdminFixture) async throws -> [String: Double] {
        var leads: [String: Double] = [:]
        for row in try await fixture.query("SELECT id, extract(epoch FROM planned_start_at - now())::float8 AS lead FROM streams WHERE id LIKE 'demo-%'") {
            leads[try row.decode("id")] = try row.decode("lead")
        }
        return leads
    }

    @Test func createsTheDemoRowsRelativeToTheDatabaseClock() async throws {
        try await AdminFixture.with { fixture in
            let run = try await fixture.admin("seed-demo", "--t60-in", "30", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == ["streams", "users", "devices", "reminders"])
            let summary = try run.json(DemoSeed.Summary.self)
            #expect(summary.users == 5)
            #expect(summary.devices == 7)
            #expect(summary.reminders == 3)
            #expect(Set(summary.streams.keys) == ["demo-t60", "demo-inside", "demo-reminder"])
            try await Self.expectDemoRows(fixture)

            let leads = try await Self.leads(fixture)
            // START_LEAD_SECONDS 3600 and REMINDER_LEAD_SECONDS 600 in the fixture's environment.
            #expect(abs((leads["demo-t60"] ?? 0) - (3600 + 30)) < 15)
            #expect(abs((leads["demo-inside"] ?? 0) - 1800) < 15)
            #expect(abs((leads["demo-reminder"] ?? 0) - (600 + 30 + 4)) < 15)
            for (id, planned) in summary.streams {
                #expect(abs(planned.timeIntervalSince(try await fixture.plannedStart(of: id))) < 1)
            }
            #expect(try await fixture.status(of: "demo-t60") == "scheduled")
        }
    }

    @Test func aSecondRunReplacesTheDemoRowsAndLeavesOthersAlone() async throws {
        try await AdminFixture.with { fixture in
            let first = try await fixture.admin("seed-demo")
            #expect(first.status == 0, "\(first)")
            try await fixture.stream("keep", startsIn: 7200, people: ["selin"])
            try await fixture.execute("UPDATE streams SET status = 'started' WHERE id = 'demo-t60'")
            try await fixture.execute("INSERT INTO devices (device_id, user_id, platform) VALUES ('demo-extra', 'demo-can', 'web')")

            let second = try await fixture.admin("seed-demo", "--force")
            #expect(second.status == 0, "\(second)")
            let lines = second.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "seeded 5 users, 7 devices, 3 reminders and streams:")
            #expect(lines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["demo-reminder", "demo-inside", "demo-t60"])
            #expect(lines.dropFirst().allSatisfy { $0.contains(" starts at ") })
            try await Self.expectDemoRows(fixture)
            #expect(try await fixture.status(of: "demo-t60") == "scheduled", "replaced, not kept")
            #expect(try await fixture.count("SELECT 1 FROM streams WHERE id = 'keep'") == 1)
            #expect(try await fixture.count("SELECT 1 FROM users WHERE id = 'selin'") == 1)
        }
    }

    @Test func aDatabaseWithNonDemoRowsIsRefusedUnlessForced() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("production-1", startsIn: 7200, people: ["selin", "mert"])
            let refused = try await fixture.admin("seed-demo")
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.errorLines == ["countdown-admin: the database holds 5 user, device or stream row(s) that are not demo rows; "
                + "seed-demo is for demo databases (pass --force to seed anyway)"], "\(refused)")
            #expect(try await fixture.count("SELECT 1 FROM streams WHERE id LIKE 'demo-%'") == 0)

            let forced = try await fixture.admin("seed-demo", "--force")
            #expect(forced.status == 0, "\(forced)")
            try await Self.expectDemoRows(fixture)
            #expect(try await fixture.count("SELECT 1 FROM streams WHERE id = 'production-1'") == 1)
        }
    }

    @Test(arguments: [["--t60-in", "0"], ["--t60-in", "3601"], ["--t60-in", "soon"], ["--t60-in"], ["now"]])
    func badArgumentsAreUsageErrors(_ extra: [String]) async throws {
        try await AdminFixture.with { fixture in
            let run = try await fixture.admin(["seed-demo"] + extra)
            #expect(run.status == 2, "\(run)")
            #expect(run.stderr.contains("usage: countdown-admin seed-demo [--t60-in SECONDS] [--force] [--json]"))
            #expect(try await fixture.count("SELECT 1 FROM streams") == 0)
        }
    }
}
