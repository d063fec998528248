import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

/// Workers behind PgBouncer in transaction mode (`?prepared_statements=false`), and `countdown-admin migrate`
/// going past the pooler through `MIGRATION_DATABASE_URL`.
@Suite(.serialized) struct PgBouncerTests {
    @Test func startAndEndFlowThroughPgBouncerInTransactionMode() async throws {
        let bouncer = try await offThePool { try ThrowawayPgBouncer() }
        let system = try await CountdownSystem()
        try await system.user("creator")
        try await system.device("creator-phone", user: "creator")
        try system.startWorker(["DATABASE_URL": bouncer.url(through: system.database.url)])
        try await system.stream("s1", startsIn: 7, creator: "creator")
        _ = try await system.waitForPushes("a start push through PgBouncer") { $0.events("start").count == 1 }
        try await system.session(stream: "s1", device: "creator-phone", user: "creator")
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = 's1'")
        _ = try await system.waitForPushes("an end push through PgBouncer") { $0.events("end").count == 1 }
        #expect(bouncer.log.contains("login attempt: db=\(system.database.name)"), "the worker connected past the pooler")
        await system.stop()
        try await offThePool { bouncer.stop() }
    }

    @Test func migrateUsesMigrationDatabaseURLPastThePooler() async throws {
        let bouncer = try await offThePool { try ThrowawayPgBouncer() }
        let database = try await TestDatabase.create(prefix: "migrate")
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTDOWN_TEST") }
        environment["DATABASE_URL"] = bouncer.url(through: database.url)
        environment["MIGRATION_DATABASE_URL"] = database.url
        let settings = environment
        let admin = TestEnvironment.productsDirectory.appendingPathComponent("countdown-admin").path
        let (status, output) = try await offThePool { try runProcess(admin, ["migrate", "--json"], environment: settings) }
        #expect(status == 0, "\(output)")
        let client = PostgresClient(configuration: database.configuration, maxConnections: 1)
        let applied = try await client.query("SELECT count(*)::int AS n FROM countdown_schema_migrations").first?.decode("n", as: Int.self)
        #expect(applied == Migration.all.count)
        client.close()
        try await database.drop()
        try await offThePool { bouncer.stop() }
    }
}
