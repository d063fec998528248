import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

/// `countdown-admin migrate` as a Kubernetes init container runs it when `DATABASE_URL` points at PgBouncer in
/// transaction mode: several pods start together, the pooler hands each transaction any server connection, and the
/// server may be away for a while (a failover).
@Suite(.serialized) struct PgBouncerMigrationTests {
    static let admin = TestEnvironment.productsDirectory.appendingPathComponent("countdown-admin").path

    static func environment(_ settings: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTDOWN_TEST") && !$0.key.hasPrefix("MIGRATION_") }
            .merging(settings) { $1 }
    }

    /// `applied` of the `{"applied": [...], "version": N}` object `migrate --json` prints (pretty, from a line
    /// `{` to a line `}`) among the stderr lines.
    static func applied(_ output: String) -> [Int]? {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "{"), let end = lines[start...].firstIndex(of: "}") else { return nil }
        let text = lines[start...end].joined(separator: "\n")
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["applied"] as? [Int]
    }

    /// Advisory locks still held in the database after every migrator exited (a pooled server connection keeps a
    /// session lock its client never released on that connection).
    static func advisoryLocks(_ client: PostgresClient) async throws -> Int {
        try await client.query("""
            SELECT count(*)::int AS n FROM pg_locks
            WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """).first?.decode("n", as: Int.self) ?? -1
    }

    @Test func threeConcurrentMigrationsThroughPgBouncerApplyEachVersionOnceAndLeaveNoLock() async throws {
        let bouncer = try await offThePool { try ThrowawayPgBouncer() }
        let database = try await TestDatabase.create(prefix: "migrate_bouncer")
        let settings = Self.environment(["DATABASE_URL": bouncer.url(through: database.url), "MIGRATION_LOCK_WAIT_SECONDS": "60"])
        let runs = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
            for _ in 0..<3 {
                group.addTask { try await offThePool { try runProcess(Self.admin, ["migrate", "--json"], environment: settings, timeout: 90) } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (status, output) in runs { #expect(status == 0, "\(output)") }
        let applied = runs.compactMap { Self.applied($0.1) }.flatMap { $0 }
        #expect(applied.sorted() == Migration.all.map(\.version).sorted(), "each version applied by exactly one: \(runs.map(\.1))")

        let client = PostgresClient(configuration: database.configuration, maxConnections: 1)
        #expect(try await client.query("SELECT count(*)::int AS n FROM countdown_schema_migrations").first?.decode("n", as: Int.self)
            == Migration.all.count)
        #expect(try await Self.advisoryLocks(client) == 0, "no migration lock left on a pooled server connection")
        client.close()

        // The next pod's init container (the pooler still holds its server connections) finds nothing to do.
        let (status, output) = try await offThePool { try runProcess(Self.admin, ["migrate", "--json"], environment: settings, timeout: 60) }
        #expect(status == 0, "\(output)")
        #expect(Self.applied(output) == [], "\(output)")
        try await database.drop()
        try await offThePool { bouncer.stop() }
    }

    @Test func aMigrationLockHeldElsewhereIsWaitedForBoundedAndLogged() async throws {
        try await TestDatabase.withFresh(prefix: "migrate_lock_held") { database, _ in
            // Another migrator in the middle of a version: the lock key held in an open transaction.
            let holder = PostgresSession(configuration: database.configuration, name: "other-migrator")
            defer { holder.close() }
            try await holder.run { c in
                try c.execute("BEGIN")
                _ = try c.query("SELECT pg_advisory_xact_lock(\(0x636F_756E_7464_6F77 as Int64))")
            }
            let settings = Self.environment(["DATABASE_URL": database.url, "MIGRATION_LOCK_WAIT_SECONDS": "2"])
            let started = Date()
            let (status, output) = try await offThePool { try runProcess(Self.admin, ["migrate"], environment: settings, timeout: 60) }
            #expect(status != 0, "\(output)")
            #expect(Date().timeIntervalSince(started) < 30, "the wait is bounded by MIGRATION_LOCK_WAIT_SECONDS")
            #expect(output.contains("waiting for the migration lock (attempt 1)"), "\(output)")
            #expect(output.contains("held by pid"), "\(output)")
            #expect(output.contains("apply migration 1 ("), "\(output)")
            try await holder.run { try $0.execute("ROLLBACK") }
        }
    }

    @Test func migrateWaitsForAnUnreachableServerThenApplies() async throws {
        let bouncer = try await offThePool { try ThrowawayPgBouncer() }
        let database = try await TestDatabase.create(prefix: "migrate_reconnect")
        try await offThePool { bouncer.stop() }
        let settings = Self.environment(["DATABASE_URL": bouncer.url(through: database.url), "MIGRATION_CONNECT_WAIT_SECONDS": "60"])
        let outputPath = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("migrate") + ".log")
        let process = try SpawnedProcess(Self.admin, ["migrate", "--json"], environment: settings,
                                         stdout: .file(outputPath), stderr: .file(outputPath))
        defer { process.stop(grace: .zero) }
        let output = { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
        try await waitUntil(timeout: .seconds(30), "migrate to report the unreachable server") {
            output().contains("cannot reach PostgreSQL (attempt 1)")
        }
        #expect(process.isRunning, "\(output())")
        try await offThePool { try bouncer.start() }
        let status = try await offThePool { process.waitBlocking(deadline: Date().addingTimeInterval(60)) }
        #expect(status == 0, "\(output())")
        #expect(Self.applied(output())?.count == Migration.all.count, "\(output())")
        try await database.drop()
        try await offThePool { bouncer.stop() }
    }

    @Test func migrateGivesUpOnAnUnreachableServerAfterItsConnectWait() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let port = refusing.port
        let settings = Self.environment(["DATABASE_URL": "postgres://countdown@127.0.0.1:\(port)/countdown?connect_timeout=1",
                                         "MIGRATION_CONNECT_WAIT_SECONDS": "2"])
        let started = Date()
        let (status, output) = try await offThePool { try runProcess(Self.admin, ["migrate"], environment: settings, timeout: 60) }
        #expect(status != 0, "\(output)")
        #expect(output.contains("cannot reach PostgreSQL (attempt 1)"), "\(output)")
        #expect(Date().timeIntervalSince(started) < 30, "\(output)")
    }
}
