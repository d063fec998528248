import CountdownStore
import Foundation
import Testing

/// `countdown-admin quarantine list|retry|drop` on a stream the reconciler could not plan.
@Suite struct QuarantineCommandTests {
    /// A stream written before the schema guard (dropped and restored around the insert, as an old row would be).
    static func arrangeBadStream(_ fixture: AdminFixture) async throws {
        try await fixture.stream("q-good", startsIn: 7200, people: ["selin"])
        _ = try await fixture.execute("ALTER TABLE streams DROP CONSTRAINT streams_planned_start_sane")
        _ = try await fixture.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('q-bad', 'Forever', 'infinity')")
        _ = try await fixture.execute("""
            ALTER TABLE streams ADD CONSTRAINT streams_planned_start_sane
            CHECK (planned_start_at >= '2000-01-01T00:00:00Z' AND planned_start_at < '2200-01-01T00:00:00Z') NOT VALID
            """)
        _ = try await fixture.execute("DELETE FROM countdown_outbox")
    }

    @Test func listRetryAndDrop() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrangeBadStream(fixture)
            let reconcile = try await fixture.admin("reconcile")
            #expect(reconcile.status == 0, "\(reconcile)")
            #expect(reconcile.stdout.contains("quarantined): q-bad"), "\(reconcile)")

            let list = try await fixture.admin("quarantine", "list", "--json")
            #expect(list.status == 0, "\(list)")
            let entries = try list.json([QuarantineEntry].self)
            #expect(entries.map(\.key) == ["q-bad"])
            #expect(entries.first?.foundBy == "reconciler")
            #expect(entries.first?.reason.contains("planned_start_at") == true)

            // Still unreadable: it stays, with the reason.
            let failing = try await fixture.admin("quarantine", "retry", "q-bad", "--json")
            #expect(failing.status == 0, "\(failing)")
            #expect(try failing.json(QuarantineRetry.self).stillFailing.keys.sorted() == ["q-bad"])

            // Fixed: planned again through the outbox, and out of the quarantine.
            _ = try await fixture.execute("UPDATE streams SET planned_start_at = now() + interval '2 hours' WHERE id = 'q-bad'")
            _ = try await fixture.execute("DELETE FROM countdown_outbox")
            let retried = try await fixture.admin("quarantine", "retry", "--all", "--json")
            #expect(try retried.json(QuarantineRetry.self).requeued == ["q-bad"], "\(retried)")
            #expect(try await fixture.count("SELECT 1 FROM countdown_outbox WHERE stream_id = 'q-bad' AND rescheduled") == 1)
            #expect(try await fixture.count("SELECT 1 FROM countdown_quarantine") == 0)

            _ = try await fixture.execute("INSERT INTO countdown_quarantine (kind, key, found_by, reason) VALUES ('stream', 'q-x', 'relay', 'r')")
            let unconfirmed = try await fixture.admin("quarantine", "drop", "q-x")
            #expect(unconfirmed.status == 2, "\(unconfirmed)")
            #expect(unconfirmed.errorLines == ["countdown-admin: quarantine drop changes data and asks first; not on a terminal, so pass --yes to confirm"])
            #expect(try await fixture.count("SELECT 1 FROM countdown_quarantine") == 1, "nothing dropped without --yes")
            let dropped = try await fixture.admin("quarantine", "drop", "q-x", "--yes")
            #expect(dropped.status == 0 && dropped.stdout.contains("dropped 1"), "\(dropped)")
            #expect(try await fixture.count("SELECT 1 FROM countdown_quarantine") == 0)
            let unknown = try await fixture.admin("quarantine", "retry", "q-none")
            #expect(unknown.status == 1, "\(unknown)")
        }
    }

    struct QuarantineEntry: Decodable {
        var key: String
        var foundBy: String
        var reason: String
    }

    struct QuarantineRetry: Decodable {
        var requeued: [String]
        var gone: [String]
        var stillFailing: [String: String]
    }
}
