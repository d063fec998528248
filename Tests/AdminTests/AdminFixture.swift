import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import DelayQueue
import Foundation
import Postgres
import Redis
import TestSupport
import Testing

/// One test's own world for `countdown-admin`: a fresh database (migrated unless asked otherwise), a Redis
/// namespace of its own and the queue in it. The built binary runs against exactly these.
final class AdminFixture: Sendable {
    let database: TestDatabase
    let db: PostgresClient
    let redis: RedisClient
    let namespace: String
    /// The queue the admin command sees (same namespace), for arranging and checking jobs.
    let queue: RedisDelayQueue

    private init(database: TestDatabase) throws {
        self.database = database
        db = PostgresClient(configuration: database.configuration, maxConnections: 2)
        redis = try RedisClient(url: TestEnvironment.redisURL, poolSize: 2)
        namespace = TestEnvironment.uniqueName("admin")
        queue = RedisDelayQueue(client: redis, namespace: namespace)
    }

    /// Runs `body` with a fixture of its own and removes the database and keys afterwards, also on failure.
    static func with<T: Sendable>(migrated: Bool = true, _ body: (AdminFixture) async throws -> T) async throws -> T {
        let fixture = try AdminFixture(database: try await TestDatabase.create(prefix: "admin"))
        do {
            if migrated { _ = try await Migrator().migrate(fixture.db) }
            let result = try await body(fixture)
            await fixture.close()
            return result
        } catch {
            await fixture.close()
            throw error
        }
    }

    private func close() async {
        queue.close()
        db.close()
        _ = try? await loseRedisData()
        redis.close()
        try? await database.drop()
    }

    /// Deletes every key of the fixture's namespace, as a Redis that lost its data (FLUSHALL, a restart without
    /// persistence) would, without touching other tests' namespaces.
    @discardableResult
    func loseRedisData() async throws -> RedisReply {
        try await redis.command([
            "EVAL", "local keys = redis.call('KEYS', ARGV[1]) for i = 1, #keys do redis.call('DEL', keys[i]) end return #keys", "0",
            RedisArgument("{\(namespace)}*"),
        ])
    }

    /// What the command runs with: this fixture's database and namespace, pushes only logged, short leads.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COUNTDOWN_TEST") }
        environment.merge([
            "DATABASE_URL": database.url, "REDIS_URL": TestEnvironment.redisURL, "COUNTDOWN_NAMESPACE": namespace,
            "PUSH_TRANSPORT": "log", "START_LEAD_SECONDS": "3600", "REMINDER_LEAD_SECONDS": "600", "EXPIRE_AFTER_SECONDS": "3600",
            "LOG_LEVEL": "warn",
        ]) { $1 }
        return environment
    }

    /// Runs `countdown-admin` with `arguments`; `overrides` change its environment (`nil` removes a variable).
    func admin(_ arguments: [String], environment overrides: [String: String?] = [:]) async throws -> AdminRun {
        var environment = self.environment
        for (name, value) in overrides { environment[name] = value }
        return try await AdminRun.launch(arguments, environment: environment)
    }

    func admin(_ arguments: String...) async throws -> AdminRun {
        try await admin(arguments)
    }
}

extension AdminFixture {
    /// Runs `arguments` and expects exit 2, `message` as the first stderr line and the command's `usage` below it.
    func expectUsageError(_ arguments: [String], _ message: String, usage: String,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let run = try await admin(arguments)
        #expect(run.status == 2, "\(run)", sourceLocation: sourceLocation)
        #expect(run.errorLines.first == "countdown-admin: \(message)", "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(usage), "\(run)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "\(run)", sourceLocation: sourceLocation)
    }
}
