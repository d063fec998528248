import BlockingIO
import CountdownStore
import Postgres
import Testing
import TestSupport

/// A migration waits for its table locks only `lockTimeout` at a time, so the statements that queue behind it are
/// never held longer than that, and tries again until its patience is spent.
@Suite struct MigrationLockTests {
    static let addColumn = Migration(version: 1000, name: "probe note", sql: "ALTER TABLE lock_probe ADD COLUMN note text")

    @Test func pausesDoubleFromHalfASecondUpToTheCapAndStopWhenPatienceIsSpent() {
        let policy = MigrationLockPolicy(lockTimeout: .milliseconds(100), patience: .seconds(60))
        #expect((1...7).map { policy.pause(afterAttempt: $0, elapsed: .zero) }
            == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
        #expect(policy.pause(afterAttempt: 3, elapsed: .milliseconds(59_300)) == .milliseconds(700))
        #expect(policy.pause(afterAttempt: 1, elapsed: .seconds(60)) == nil)
        #expect(policy.pause(afterAttempt: 1_000, elapsed: .zero) == .seconds(10))
    }

    static func prepare(_ client: PostgresClient) async throws {
        _ = try await Migrator().migrate(client)
        try await client.execute("CREATE TABLE lock_probe (id integer)")
        try await client.execute("INSERT INTO lock_probe VALUES (1)")
    }

    /// An open write transaction on the table, as a long-running job or a manual maintenance would hold.
    static func holdWriteLock(_ database: TestDatabase) async throws -> PostgresSession {
        let holder = PostgresSession(configuration: database.configuration, name: "lock-holder")
        try await holder.run { c in
            try c.execute("BEGIN")
            try c.execute("INSERT INTO lock_probe VALUES (2)")
        }
        return holder
    }

    @Test func aMigrationBehindALongTransactionLetsTrafficThroughAndAppliesOnceTheLockIsFree() async throws {
        try await TestDatabase.withFresh(prefix: "migration_lock") { database, client in
            try await Self.prepare(client)
            let holder = try await Self.holdWriteLock(database)
            defer { holder.close() }
            let waits = Locked<[Int]>([])
            let migrator = Migrator(migrations: Migration.all + [Self.addColumn],
                                    lockPolicy: MigrationLockPolicy(lockTimeout: .milliseconds(100), patience: .seconds(30)))
            let run = Task {
                try await migrator.migrate(client, lockWait: { wait in waits.withLock { $0.append(wait.attempt) } })
            }
            try await waitUntil("the migration to give up on the lock once") { !waits.value.isEmpty }

            // Readers that accept at most 1 s behind a lock are served while the migration keeps trying.
            var readerConfiguration = database.configuration
            readerConfiguration.sessionSettings["lock_timeout"] = "1s"
            let reader = PostgresClient(configuration: readerConfiguration, maxConnections: 1)
            defer { reader.close() }
            for _ in 0..<5 {
                #expect(try await reader.query("SELECT count(*) AS n FROM lock_probe").first?.decode("n", as: Int.self) == 1)
                try await Task.sleep(for: .milliseconds(200))
            }

            try await holder.run { try $0.execute("COMMIT") }
            let report = try await run.value
            #expect(report.applied == [1000])
            #expect(waits.value.first == 1)
            #expect(waits.value == Array(1...waits.value.count))
            #expect(try await client.query("SELECT count(note) AS n FROM lock_probe").first?.decode("n", as: Int.self) == 0)
        }
    }

    @Test func aMigrationThatNeverGetsItsLockFailsNamingItselfAndRecordsNothing() async throws {
        try await TestDatabase.withFresh(prefix: "migration_lock_fail") { database, client in
            try await Self.prepare(client)
            let holder = try await Self.holdWriteLock(database)
            defer { holder.close() }
            let migrator = Migrator(migrations: Migration.all + [Self.addColumn],
                                    lockPolicy: MigrationLockPolicy(lockTimeout: .milliseconds(100), patience: .seconds(1)))
            let waits = Locked(0)
            let error = await #expect(throws: PostgresError.self) {
                try await migrator.migrate(client, lockWait: { _ in waits.withLock { $0 += 1 } })
            }
            #expect(error?.isLockTimeout == true)
            #expect(error?.what == "apply migration 1000 (probe note)")
            #expect(error?.message?.contains("another session holds a lock") == true)
            #expect(waits.value >= 1)
            #expect(try await client.query("SELECT 1 FROM countdown_schema_migrations WHERE version = 1000").isEmpty)
            try await holder.run { try $0.execute("ROLLBACK") }
        }
    }
}
