import Foundation
import Postgres

/// Applies `Migration.all` in order: versioned, forward-only, each version in its own transaction, and safe when
/// several run at once (a session advisory lock serialises them; the second finds nothing left to do). A migration
/// never queues traffic behind it for long: see `MigrationLockPolicy`.
public struct Migrator: Sendable {
    /// What a run did.
    public struct Report: Sendable, Equatable {
        public var applied: [Int]
        public var currentVersion: Int
    }

    /// A migration's attempt gave up on a lock and will be tried again.
    public struct LockWait: Sendable {
        public var migration: Migration
        /// The attempt that gave up, from 1.
        public var attempt: Int
        /// The pause before the next attempt.
        public var pause: Duration
        /// The server's lock timeout error.
        public var error: PostgresError
    }

    /// Advisory lock key shared by every migrator ("countdown" in ASCII).
    static let lockKey: Int64 = 0x636F_756E_7464_6F77

    public let migrations: [Migration]
    public let lockPolicy: MigrationLockPolicy

    public init(migrations: [Migration] = Migration.all, lockPolicy: MigrationLockPolicy = MigrationLockPolicy()) {
        self.migrations = migrations
        self.lockPolicy = lockPolicy
    }

    /// Applies what is missing; `progress` is called before each version with its number and name, `lockWait` each
    /// time an attempt gave up on a lock. Fails with the lock timeout error (its `what` naming the migration) when a
    /// migration could not take its locks within the policy's patience.
    public func migrate(
        _ database: PostgresClient, progress: @escaping @Sendable (Migration) -> Void = { _ in },
        lockWait: @escaping @Sendable (LockWait) -> Void = { _ in }
    ) async throws -> Report {
        let (migrations, policy) = (self.migrations, lockPolicy)
        return try await database.withConnection { connection in
            _ = try connection.query("SELECT pg_advisory_lock($1)", [Self.lockKey])
            defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS countdown_schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            let done = Set(try connection.query("SELECT version FROM countdown_schema_migrations").map { try $0.decode("version", as: Int.self) })
            var applied: [Int] = []
            for migration in migrations.sorted(by: { $0.version < $1.version }) where !done.contains(migration.version) {
                progress(migration)
                try Self.apply(migration, on: connection, policy: policy, lockWait: lockWait)
                applied.append(migration.version)
            }
            let current = try connection.query("SELECT coalesce(max(version), 0) AS v FROM countdown_schema_migrations")
                .first?.decode("v", as: Int.self) ?? 0
            return Report(applied: applied, currentVersion: current)
        }
    }

    /// One migration in one transaction, tried again while it gives up on locks and patience is left.
    private static func apply(
        _ migration: Migration, on connection: PostgresConnection, policy: MigrationLockPolicy,
        lockWait: (LockWait) -> Void
    ) throws {
        let clock = ContinuousClock()
        let started = clock.now
        var attempt = 0
        while true {
            attempt += 1
            do {
                try connection.transaction { connection in
                    _ = try connection.query("SELECT set_config('lock_timeout', $1, true)", [policy.lockTimeoutSetting])
                    try connection.executeScript(migration.sql)
                    try connection.execute("INSERT INTO countdown_schema_migrations (version, name) VALUES ($1, $2)",
                                           [migration.version, migration.name])
                }
                return
            } catch let error as PostgresError where error.isLockTimeout {
                guard let pause = policy.pause(afterAttempt: attempt, elapsed: started.duration(to: clock.now)) else {
                    throw PostgresError(
                        code: error.code, what: "apply migration \(migration.version) (\(migration.name))",
                        sqlState: error.sqlState,
                        message: "could not take its locks within \(policy.patience) (\(attempt) attempts, each waiting "
                            + "\(policy.lockTimeout)): another session holds a lock on the table it changes (see pg_locks); "
                            + "last: \(error.message ?? "lock timeout")",
                        detail: error.detail)
                }
                lockWait(LockWait(migration: migration, attempt: attempt, pause: pause, error: error))
                let (seconds, attoseconds) = pause.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            }
        }
    }
}
