import CountdownStore
import Postgres
import Testing
import TestSupport

/// Migration 10 replaces the start ledger's foreign key to `streams` with a statement-level trigger: a deleted
/// stream's ledger rows go with it (as the key's cascade did), other streams' rows stay, and no ledger insert
/// checks the key any more.
@Suite struct LedgerStreamTriggerTests {
    static func seed(_ c: PostgresConnection, streams: [String]) throws {
        try c.execute("INSERT INTO users (id, display_name) VALUES ('u1', 'U1'), ('u2', 'U2') ON CONFLICT DO NOTHING")
        try c.execute("INSERT INTO streams (id, title, planned_start_at) SELECT s, s, now() + interval '2 hours' FROM unnest($1::text[]) s",
                      [PostgresTextArray(streams)])
        try c.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status)
            SELECT s, u, u || '-phone', 'sent' FROM unnest($1::text[]) s, unnest(ARRAY['u1', 'u2']) u
            """, [PostgresTextArray(streams)])
    }

    static func ledgerStreams(_ client: PostgresClient) async throws -> [String] {
        try await client.query("SELECT stream_id FROM countdown_start_ledger ORDER BY stream_id, user_id").map { try $0.decode("stream_id", as: String.self) }
    }

    static func ledgerKeysToStreams(_ client: PostgresClient) async throws -> Int {
        try await client.query("""
            SELECT count(*) AS n FROM pg_constraint
            WHERE conrelid = 'countdown_start_ledger'::regclass AND confrelid = 'streams'::regclass AND contype = 'f'
            """).first?.decode("n", as: Int.self) ?? -1
    }

    @Test func deletingStreamsRemovesTheirLedgerRowsOnly() async throws {
        try await TestDatabase.withFresh(prefix: "ledger_trigger") { _, client in
            _ = try await Migrator().migrate(client)
            #expect(try await Self.ledgerKeysToStreams(client) == 0)
            try await client.withConnection { try Self.seed($0, streams: ["a", "b", "c", "d"]) }
            try await client.execute("DELETE FROM streams WHERE id = 'b'")
            #expect(try await Self.ledgerStreams(client) == ["a", "a", "c", "c", "d", "d"])
            try await client.execute("DELETE FROM streams WHERE id IN ('a', 'd')")  // several rows in one statement
            #expect(try await Self.ledgerStreams(client) == ["c", "c"])
            try await client.execute("DELETE FROM streams WHERE id = 'nothing'")  // no row: nothing happens
            #expect(try await Self.ledgerStreams(client) == ["c", "c"])
            try await client.execute("TRUNCATE streams CASCADE")
            #expect(try await Self.ledgerStreams(client) == [])
        }
    }

    @Test func aDeleteRolledBackKeepsTheRows() async throws {
        try await TestDatabase.withFresh(prefix: "ledger_trigger_rollback") { _, client in
            _ = try await Migrator().migrate(client)
            try await client.withConnection { try Self.seed($0, streams: ["a"]) }
            try await client.withConnection { c in
                try c.execute("BEGIN")
                try c.execute("DELETE FROM streams WHERE id = 'a'")
                #expect(try c.query("SELECT count(*) AS n FROM countdown_start_ledger").first?.decode("n", as: Int.self) == 0)
                try c.execute("ROLLBACK")
            }
            #expect(try await Self.ledgerStreams(client) == ["a", "a"])
        }
    }

    @Test func upgradingFromVersion9KeepsRowsAndDropsTheKey() async throws {
        try await TestDatabase.withFresh(prefix: "ledger_trigger_upgrade") { _, client in
            _ = try await Migrator(migrations: Migration.all.filter { $0.version < 10 }).migrate(client)
            #expect(try await Self.ledgerKeysToStreams(client) == 1)
            try await client.withConnection { try Self.seed($0, streams: ["a", "b"]) }
            #expect(try await Migrator().migrate(client).applied.contains(10))
            #expect(try await Self.ledgerKeysToStreams(client) == 0)
            #expect(try await Self.ledgerStreams(client) == ["a", "a", "b", "b"])
            try await client.execute("DELETE FROM streams WHERE id = 'a'")
            #expect(try await Self.ledgerStreams(client) == ["b", "b"])
        }
    }
}
