import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import Foundation
import Postgres
import Testing

@Suite struct MigrateCommandTests {
    static let versions = Migration.all.map(\.version).sorted()

    @Test func firstRunAppliesEveryVersionInOrderThenReportsUpToDate() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let first = try await fixture.admin("migrate")
            #expect(first.status == 0, "\(first)")
            let applying = first.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("applying ") }
            #expect(applying == Migration.all.sorted { $0.version < $1.version }.map { "applying \($0.version): \($0.name)" })
            #expect(first.stdout.contains("applied \(Self.versions.count) migration(s); schema is at version \(Self.versions.last!)"))

            let second = try await fixture.admin("migrate")
            #expect(second.status == 0, "\(second)")
            #expect(second.stdout == "schema is up to date (version \(Self.versions.last!)); nothing to do\n")
            #expect(try await fixture.count("SELECT version FROM countdown_schema_migrations") == Self.versions.count)
        }
    }

    @Test func migrationDatabaseURLWinsOverDatabaseURL() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let direct = fixture.environment["DATABASE_URL"]
            let run = try await fixture.admin(["migrate"], environment: [
                "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nowhere", "MIGRATION_DATABASE_URL": direct,
            ])
            #expect(run.status == 0, "\(run)")
            #expect(try await fixture.count("SELECT version FROM countdown_schema_migrations") == Self.versions.count)
        }
    }

    @Test func jsonListsAppliedVersionsAndTheCurrentOne() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let first = try await fixture.admin("migrate", "--json")
            #expect(first.status == 0, "\(first)")
            let object = try first.jsonObject()
            #expect(Set(object.keys) == ["applied", "version"])
            #expect(object["applied"] as? [Int] == Self.versions)
            #expect(object["version"] as? Int == Self.versions.last)

            let again = try await fixture.admin("migrate", "--json").jsonObject()
            #expect(again["applied"] as? [Int] == [])
            #expect(again["version"] as? Int == Self.versions.last)
        }
    }

    @Test func twoConcurrentRunsBothSucceedAndApplyTheSchemaOnce() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            async let one = fixture.admin("migrate", "--json")
            async let two = fixture.admin("migrate", "--json")
            let runs = try await [one, two]
            for run in runs { #expect(run.status == 0, "\(run)") }
            // Each version is applied by exactly one of them (the lock is per version, so they may share the work).
            let applied = try runs.map { try $0.jsonObject()["applied"] as? [Int] ?? [-1] }
            #expect((applied[0] + applied[1]).sorted() == Self.versions)
            let rows = try await fixture.query("SELECT version FROM countdown_schema_migrations ORDER BY version")
            #expect(try rows.map { try $0.decode("version", as: Int.self) } == Self.versions)
            #expect(try await fixture.count("SELECT 1 FROM pg_tables WHERE tablename = 'streams'") == 1)
        }
    }

    @Test func statusListsAppliedAndPendingVersionsAndChangesNothing() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let empty = try await fixture.admin("migrate", "--status", "--json")
            #expect(empty.status == 0, "\(empty)")
            let before = try empty.json(Migrator.Status.self)
            #expect(before.applied.isEmpty)
            #expect(before.pending.map(\.version) == Self.versions)
            #expect(before.version == 0 && before.required == Self.versions.last)
            #expect(try await fixture.count("SELECT 1 FROM pg_tables WHERE tablename = 'countdown_schema_migrations'") == 0, "read-only")

            // The first two versions applied, as an older release would have left the database.
            _ = try await Migrator(migrations: Array(Migration.all.sorted { $0.version < $1.version }.prefix(2))).migrate(fixture.db)
            let text = try await fixture.admin("migrate", "--status")
            #expect(text.status == 0, "\(text)")
            let lines = text.stdout.split(separator: "\n").map(String.init)
            let pendingAt = try #require(lines.firstIndex(of: "pending:"))
            #expect(lines.first == "applied:")
            #expect(lines[1...pendingAt - 1].dropFirst().compactMap { $0.split(separator: " ").first.map(String.init) } == Self.versions.prefix(2).map(String.init))
            #expect(lines[(pendingAt + 2)...].dropLast().compactMap { $0.split(separator: " ").first.map(String.init) } == Self.versions.dropFirst(2).map(String.init))
            #expect(lines.last == "schema is at version \(Self.versions[1]); \(Self.versions.count - 2) pending (this build needs \(Self.versions.last!)): run countdown-admin migrate")

            _ = try await fixture.admin("migrate")
            let after = try await fixture.admin("migrate", "--status", "--json").json(Migrator.Status.self)
            #expect(after.applied.map(\.version) == Self.versions)
            #expect(after.pending.isEmpty)
            #expect(try await fixture.admin("migrate", "--status").stdout.hasSuffix("schema is at version \(Self.versions.last!); nothing pending\n"))
        }
    }

    @Test func missingDatabaseURLIsAConfigurationError() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let run = try await fixture.admin(["migrate"], environment: ["DATABASE_URL": nil])
            #expect(run.status == 2, "\(run)")
            #expect(run.errorLines == ["countdown-admin: DATABASE_URL: is required but not set"])
        }
    }

    @Test func unexpectedArgumentIsAUsageError() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let run = try await fixture.admin("migrate", "now")
            #expect(run.status == 2, "\(run)")
            #expect(run.stderr.contains("unexpected argument \"now\""))
            #expect(run.stderr.contains("usage: countdown-admin migrate"))
            #expect(try await fixture.count("SELECT 1 FROM pg_tables WHERE tablename = 'countdown_schema_migrations'") == 0)
        }
    }

    @Test func aLockTimeoutOutOfRangeIsAConfigurationError() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let run = try await fixture.admin(["migrate"], environment: ["MIGRATION_LOCK_TIMEOUT_MS": "0"])
            #expect(run.status == 2, "\(run)")
            #expect(run.stderr.contains("MIGRATION_LOCK_TIMEOUT_MS"))
            #expect(try await fixture.count("SELECT 1 FROM pg_tables WHERE tablename = 'countdown_schema_migrations'") == 0)
        }
    }

    /// An index build (SHARE lock) on the ledger and on `devices` holds the last migration's ALTER (12's of the
    /// ledger, 30's of `devices`): each attempt gives up after the lock timeout, says so on stderr, and the run
    /// fails naming the migration when the wait is spent.
    @Test func aMigrationHeldBehindALockSaysSoAndFailsNamingItself() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let sorted = Migration.all.sorted { $0.version < $1.version }
            let last = try #require(sorted.first { $0.version == 12 })
            _ = try await Migrator(migrations: sorted.filter { $0.version < last.version }).migrate(fixture.db)
            let holder = PostgresSession(configuration: fixture.database.configuration, name: "lock-holder")
            defer { holder.close() }
            try await holder.run { c in
                try c.execute("BEGIN")
                try c.execute("LOCK TABLE countdown_start_ledger, devices IN SHARE MODE")
            }
            let run = try await fixture.admin(["migrate"], environment: [
                "MIGRATION_LOCK_TIMEOUT_MS": "100", "MIGRATION_LOCK_WAIT_SECONDS": "1",
            ])
            #expect(run.status != 0, "\(run)")
            let waits = run.errorLines.filter { $0.hasPrefix("migration \(last.version) (\(last.name)): a lock was not free within 0.1 seconds (attempt ") }
            #expect(waits.count >= 1, "\(run)")
            #expect(run.stderr.contains("apply migration \(last.version) (\(last.name))"), "\(run)")
            #expect(try await fixture.count("SELECT 1 FROM countdown_schema_migrations WHERE version = $1", [last.version]) == 0)

            try await holder.run { try $0.execute("ROLLBACK") }
            let again = try await fixture.admin("migrate")
            #expect(again.status == 0, "\(again)")
            #expect(again.stdout.contains("applying \(last.version): \(last.name)"))
        }
    }
}
