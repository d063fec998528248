import Foundation
import Postgres
import Testing

/// `countdown-admin retention --dry-run` prints what the pruner would delete, per table, and changes nothing;
/// `retention --yes` deletes it (SPEC 12.3).
@Suite struct RetentionCommandTests {
    struct Output: Decodable { var dryRun: Bool; var retentionDays: Double; var tables: [String: Int]; var total: Int }

    /// `old` ended 40 days ago, `live` is scheduled; each has a ledger row and a session; one audit row is 400 days old.
    static func seed(_ fixture: AdminFixture) async throws {
        for (stream, user) in [("old", "ada"), ("live", "bob")] {
            try await fixture.stream(stream, startsIn: 1800, people: [user])
            try await fixture.session(stream, user: user)
            try await fixture.execute("INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) VALUES ($1, $2, $3, 'sent')",
                                      [stream, user, AdminFixture.phone(user)])
        }
        try await fixture.execute("UPDATE streams SET status = 'cancelled' WHERE id = 'old'")
        try await fixture.execute("UPDATE countdown_stream_ends SET left_scheduled_at = now() - interval '40 days' WHERE stream_id = 'old'")
        try await fixture.execute("""
            INSERT INTO countdown_audit (at, actor, role, action, outcome) VALUES (now() - interval '400 days', 'ada', 'console', 'cancel', 'done')
            """)
    }

    func remaining(_ fixture: AdminFixture) async throws -> [Int] {
        [try await fixture.count("SELECT 1 FROM countdown_start_ledger WHERE stream_id = 'old'"),
         try await fixture.count("SELECT 1 FROM live_activity_sessions WHERE stream_id = 'old'"),
         try await fixture.count("SELECT 1 FROM countdown_audit WHERE at < now() - interval '1 day'"),
         try await fixture.count("SELECT 1 FROM countdown_start_ledger WHERE stream_id = 'live'"),
         try await fixture.count("SELECT 1 FROM live_activity_sessions WHERE stream_id = 'live'"),
         try await fixture.count("SELECT 1 FROM streams")]
    }

    @Test func dryRunPrintsWhatWouldGoPerTableAndChangesNothing() async throws {
        try await AdminFixture.with { fixture in
            try await Self.seed(fixture)
            let json = try await fixture.admin("retention", "--dry-run", "--json")
            #expect(json.status == 0, "\(json)")
            let output = try json.json(Output.self)
            #expect(output.dryRun && output.retentionDays == 30)
            #expect(output.tables["countdown_start_ledger"] == 1 && output.tables["live_activity_sessions"] == 1 && output.tables["countdown_audit"] == 1,
                    "\(output.tables)")
            #expect(output.tables["countdown_token_invalidations"] == 0)
            let text = try await fixture.admin("retention", "--dry-run")
            #expect(text.stdout.contains("countdown_start_ledger") && text.stdout.contains("nothing changed"), "\(text)")
            // Without --yes, off a terminal: refused, nothing deleted.
            #expect(try await fixture.admin("retention").status == 2)
            #expect(try await remaining(fixture) == [1, 1, 1, 1, 1, 2])
        }
    }

    @Test func aRunDeletesWhatAgedOutOnly() async throws {
        try await AdminFixture.with { fixture in
            try await Self.seed(fixture)
            let run = try await fixture.admin("retention", "--yes", "--json")
            #expect(run.status == 0, "\(run)")
            let output = try run.json(Output.self)
            #expect(!output.dryRun && output.tables["countdown_start_ledger"] == 1 && output.tables["countdown_audit"] == 1, "\(output.tables)")
            #expect(try await remaining(fixture) == [0, 0, 0, 1, 1, 2], "the scheduled stream's rows and every stream stay")
            #expect(try await fixture.count("SELECT 1 FROM countdown_audit WHERE action = 'retention' AND outcome = 'done'") == 1)
        }
    }

    @Test func anAbsurdRetentionIsRefusedNamingTheVariable() async throws {
        try await AdminFixture.with { fixture in
            for value in ["0", "-3", "36500"] {
                let run = try await fixture.admin(["retention", "--dry-run"], environment: ["RETENTION_DAYS": value])
                #expect(run.status == 2 && run.stderr.contains("RETENTION_DAYS"), "\(value): \(run)")
            }
        }
    }
}
