import CountdownStore
import Postgres
import Testing
import TestSupport

/// Migration 9 moves the reminder outbox trigger's condition into `WHEN` clauses: the same writes leave the same
/// outbox rows as on version 8 (what the relay plans is unchanged), and marking reminders `sent` or `cancelled` no
/// longer calls the trigger function at all.
@Suite struct ReminderOutboxTriggerTests {
    /// Every way a writer touches reminders, each in its own statement; returns the outbox rows left, oldest first.
    static func outboxAfterWrites(_ client: PostgresClient) async throws -> [String] {
        try await client.withConnection { c in
            try c.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, 6) i")
            try c.execute("""
                INSERT INTO streams (id, title, planned_start_at) VALUES
                  ('s', 'S', now() + interval '2 hours'), ('t', 'T', now() + interval '2 hours')
                """)
            try c.execute("DELETE FROM countdown_outbox")
            let writes = [
                // Inserts: active ones only are recorded (the default status is active).
                "INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ('s', 'u1', 'active'), ('s', 'u2', 'sent'), ('s', 'u3', 'cancelled'), ('s', 'u4', 'active'), ('t', 'u1', DEFAULT)",
                "UPDATE stream_reminders SET status = 'sent' WHERE stream_id = 's' AND user_id = 'u1'",  // active → sent: nothing
                "UPDATE stream_reminders SET status = 'active' WHERE stream_id = 's' AND user_id = 'u2'",  // sent → active
                "UPDATE stream_reminders SET status = 'active' WHERE stream_id = 's' AND user_id = 'u3'",  // cancelled → active
                "UPDATE stream_reminders SET status = 'active' WHERE stream_id = 's' AND user_id = 'u4'",  // active → active: nothing
                "UPDATE stream_reminders SET created_at = now() - interval '1 day' WHERE stream_id = 't'",  // no status change: nothing
                // An upsert: u1 back to active (update), u5 inserted active, u6 inserted sent (nothing).
                """
                INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ('s', 'u1', 'active'), ('s', 'u5', 'active'), ('s', 'u6', 'sent')
                ON CONFLICT (stream_id, user_id) DO UPDATE SET status = EXCLUDED.status
                """,
                "UPDATE streams SET status = 'cancelled' WHERE id = 't'",  // the stream's row; its reminders cancelled: nothing
                "UPDATE stream_reminders SET status = 'sent' WHERE stream_id = 's'",  // a fan-out marks everyone sent: nothing
            ]
            for write in writes { try c.execute(write) }
            return try c.query("SELECT topic, coalesce(stream_id, '') AS s, coalesce(user_id, '') AS u FROM countdown_outbox ORDER BY id").map {
                "\(try $0.decode("topic", as: String.self)) \(try $0.decode("s", as: String.self)) \(try $0.decode("u", as: String.self))"
            }
        }
    }

    static let expected = [
        "reminder s u1", "reminder s u4", "reminder t u1",
        "reminder s u2", "reminder s u3",
        "reminder s u1", "reminder s u5",
        "stream t ",
    ]

    @Test func theSameWritesLeaveTheSameOutboxRowsAsVersion8() async throws {
        var before: [String] = []
        try await TestDatabase.withFresh(prefix: "reminder_v8") { _, client in
            let report = try await Migrator(migrations: Migration.all.filter { $0.version < 9 }).migrate(client)
            #expect(report.currentVersion == 8)
            before = try await Self.outboxAfterWrites(client)
        }
        try await TestDatabase.withFresh(prefix: "reminder_v9") { _, client in
            let report = try await Migrator().migrate(client)
            #expect(report.currentVersion >= 9)
            #expect(try await Self.outboxAfterWrites(client) == before)
        }
        #expect(before == Self.expected)
    }

    @Test func upgradingKeepsRecordingReactivatedReminders() async throws {
        try await TestDatabase.withFresh(prefix: "reminder_upgrade") { _, client in
            _ = try await Migrator(migrations: Migration.all.filter { $0.version < 9 }).migrate(client)
            try await client.execute("INSERT INTO users (id, display_name) VALUES ('u1', 'U')")
            try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '2 hours')")
            try await client.execute("INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ('s', 'u1', 'sent')")
            #expect(try await Migrator().migrate(client).applied.contains(9))
            try await client.execute("DELETE FROM countdown_outbox")
            try await client.execute("UPDATE stream_reminders SET status = 'active'")
            let rows = try await client.query("SELECT topic, user_id FROM countdown_outbox")
            #expect(try rows.map { "\(try $0.decode("topic", as: String.self)) \(try $0.decode("user_id", as: String.self))" } == ["reminder u1"])
        }
    }

    @Test func markingRemindersSentCallsNoTrigger() async throws {
        try await TestDatabase.withFresh(prefix: "reminder_calls") { _, client in
            _ = try await Migrator().migrate(client)
            try await client.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, 50) i")
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '2 hours')")
                try c.execute("INSERT INTO stream_reminders (stream_id, user_id) SELECT 's', id FROM users")
            }
            let calls = try await client.transaction { c -> [Int] in
                // Function calls of this transaction, not yet reported (superuser setting; the test server's user is one).
                try c.execute("SET LOCAL track_functions = 'pl'")
                func called() throws -> Int {
                    try c.query("""
                        SELECT coalesce(sum(calls), 0)::int AS n FROM pg_stat_xact_user_functions WHERE funcname = 'countdown_reminders_changed'
                        """).first?.decode("n", as: Int.self) ?? -1
                }
                try c.execute("UPDATE stream_reminders SET status = 'sent' WHERE stream_id = 's'")
                let afterSent = try called()
                try c.execute("UPDATE stream_reminders SET status = 'active' WHERE stream_id = 's'")
                return [afterSent, try called()]
            }
            #expect(calls == [0, 50], "no call for 50 reminders marked sent; one per reminder made active again")
        }
    }
}
