import Foundation
import Postgres

/// Applies `Migration.all` in order: versioned, forward-only, each version in its own transaction, and safe when
/// several run at once, also through PgBouncer in transaction mode: each migration's transaction first takes a
/// transaction-level advisory lock with `pg_try_advisory_xact_lock` (never a session lock, which a pooler would
/// leave on a server connection) and checks under it that the version is still missing. A migrator that finds the
/// lock taken does not queue for it: it pauses and tries again (reported through `lockWait`) until its patience is
/// spent. A migration never queues traffic behind it for long: see `MigrationLockPolicy`. A connection that cannot
/// be opened or breaks (a failover) is tried again within the policy's `connectPatience` (reported through
/// `reconnect`); what was committed stays, the rest is applied on the new connection.
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
        /// The server's lock timeout error, or the one describing the migration lock held elsewhere.
        public var error: PostgresError
        /// Another migrator held the migration lock (rather than a session holding a table lock).
        public var heldByAnotherMigrator: Bool
    }

    /// The server could not be reached (or the connection broke) and the run will try again.
    public struct ConnectionWait: Sendable {
        /// The attempt that failed, from 1.
        public var attempt: Int
        /// The pause before the next attempt.
        public var pause: Duration
        public var error: PostgresError
    }

    /// Advisory lock key shared by every migrator ("countdown" in ASCII). Migrators before 0.2.0 take it as a
    /// session lock; a session lock and a transaction lock on one key exclude each other.
    static let lockKey: Int64 = 0x636F_756E_7464_6F77

    public let migrations: [Migration]
    public let lockPolicy: MigrationLockPolicy

    public init(migrations: [Migration] = Migration.all, lockPolicy: MigrationLockPolicy = MigrationLockPolicy()) {
        self.migrations = migrations
        self.lockPolicy = lockPolicy
    }

    /// Applies what is missing; `progress` is called before each missing version with its number and name
    /// (another migrator may still apply it first), `lockWait` each time an attempt gave up on a lock, `reconnect`
    /// each time the server could not be reached. Fails with the lock timeout error (its `what` naming the
    /// migration) when a migration could not take its locks within the policy's patience, and with the connection
    /// error when the server stayed away longer than its connect patience.
    public func migrate(
        _ database: PostgresClient, progress: @escaping @Sendable (Migration) -> Void = { _ in },
        lockWait: @escaping @Sendable (LockWait) -> Void = { _ in },
        reconnect: @escaping @Sendable (ConnectionWait) -> Void = { _ in }
    ) async throws -> Report {
        let missing = try await reconnecting(reconnect) { try await status(database).pending.map(\.version) }
        var applied: [Int] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) where missing.contains(migration.version) {
            progress(migration)
            if try await reconnecting(reconnect, { try await apply(migration, database, lockWait: lockWait) }) {
                applied.append(migration.version)
            }
        }
        let current = try await reconnecting(reconnect) { try await Self.appliedVersion(database) }
        return Report(applied: applied, currentVersion: current)
    }

    /// What one attempt at a migration found.
    private enum Attempt: Sendable {
        case applied, alreadyApplied, lockHeldElsewhere(String)
    }

    /// One migration in one transaction, tried again while it gives up on locks and patience is left. False when
    /// another migrator applied it first.
    private func apply(
        _ migration: Migration, _ database: PostgresClient, lockWait: (LockWait) -> Void
    ) async throws -> Bool {
        let policy = lockPolicy
        let clock = ContinuousClock()
        let started = clock.now
        var attempt = 0
        while true {
            attempt += 1
            let failure: PostgresError
            var elsewhere = false
            do {
                switch try await database.withConnection({ try Self.attempt(migration, on: $0, policy: policy) }) {
                case .applied: return true
                case .alreadyApplied: return false
                case .lockHeldElsewhere(let holder):
                    elsewhere = true
                    failure = PostgresError(
                        code: .queryFailed, what: "take the migration lock", sqlState: "55P03",
                        message: "another countdown-admin migrate holds the migration lock (\(holder))")
                }
            } catch let error as PostgresError where error.isLockTimeout {
                failure = error
            }
            guard let pause = policy.pause(afterAttempt: attempt, elapsed: started.duration(to: clock.now)) else {
                let cause = elsewhere
                    ? "another migrator held the migration lock throughout"
                    : "another session holds a lock on the table it changes (see pg_locks)"
                throw PostgresError(
                    code: failure.code, what: "apply migration \(migration.version) (\(migration.name))",
                    sqlState: failure.sqlState,
                    message: "could not take its locks within \(policy.patience) (\(attempt) attempts, each waiting "
                        + "\(policy.lockTimeout)): \(cause); last: \(failure.message ?? "lock timeout")",
                    detail: failure.detail)
            }
            lockWait(LockWait(migration: migration, attempt: attempt, pause: pause, error: failure,
                              heldByAnotherMigrator: elsewhere))
            try await Task.sleep(for: pause)
        }
    }

    /// Under the migration lock (transaction-level, so it ends with the transaction on whatever server connection
    /// a pooler chose): create the versions table if needed, skip a version another migrator applied, else apply it.
    private static func attempt(_ migration: Migration, on connection: PostgresConnection,
                                policy: MigrationLockPolicy) throws -> Attempt {
        try connection.transaction { connection in
            _ = try connection.query("SELECT set_config('lock_timeout', $1, true)", [policy.lockTimeoutSetting])
            let locked = try connection.query("SELECT pg_try_advisory_xact_lock($1) AS locked", [lockKey])
                .first?.decode("locked", as: Bool.self) ?? false
            guard locked else { return .lockHeldElsewhere(try holder(on: connection)) }
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS countdown_schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            guard try connection.query("SELECT 1 FROM countdown_schema_migrations WHERE version = $1",
                                       [migration.version]).isEmpty else { return .alreadyApplied }
            try connection.executeScript(migration.sql)
            try connection.execute("INSERT INTO countdown_schema_migrations (version, name) VALUES ($1, $2)",
                                   [migration.version, migration.name])
            return .applied
        }
    }

    /// Who holds the migration lock, for the log line: the backend's pid, application name and client address
    /// (behind a pooler, the pooler's server connection).
    private static func holder(on connection: PostgresConnection) throws -> String {
        let rows = try connection.query("""
            SELECT l.pid, coalesce(a.application_name, '') AS application, coalesce(host(a.client_addr), 'local') AS client
            FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid
              AND l.objsubid = 1
            """, [Int64(lockKey >> 32), Int64(lockKey & 0xFFFF_FFFF)])
        guard let row = rows.first else { return "released meanwhile" }
        return "held by pid \(try row.decode("pid", as: Int.self)), application \"\(try row.decode("application", as: String.self))\", "
            + "client \(try row.decode("client", as: String.self))"
    }

    /// `body`, tried again while the server cannot be reached, within the policy's connect patience.
    private func reconnecting<T: Sendable>(
        _ reconnect: (ConnectionWait) -> Void, _ body: () async throws -> T
    ) async throws -> T {
        let clock = ContinuousClock()
        let started = clock.now
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await body()
            } catch let error as PostgresError where error.isConnectionLoss {
                guard let pause = lockPolicy.reconnectPause(afterAttempt: attempt, elapsed: started.duration(to: clock.now)) else {
                    throw error
                }
                reconnect(ConnectionWait(attempt: attempt, pause: pause, error: error))
                try await Task.sleep(for: pause)
            }
        }
    }
}
