import Postgres

/// Applies `Migration.all` in order: versioned, forward-only, each version in its own transaction, and safe when
/// several run at once (a session advisory lock serialises them; the second finds nothing left to do).
public struct Migrator: Sendable {
    /// What a run did.
    public struct Report: Sendable, Equatable {
        public var applied: [Int]
        public var currentVersion: Int
    }

    /// Advisory lock key shared by every migrator ("countdown" in ASCII).
    static let lockKey: Int64 = 0x636F_756E_7464_6F77

    public let migrations: [Migration]

    public init(migrations: [Migration] = Migration.all) {
        self.migrations = migrations
    }

    /// Applies what is missing; `progress` is called before each version with its number and name.
    public func migrate(_ database: PostgresClient, progress: @escaping @Sendable (Migration) -> Void = { _ in }) async throws -> Report {
        let migrations = self.migrations
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
                try connection.transaction { connection in
                    try connection.executeScript(migration.sql)
                    try connection.execute("INSERT INTO countdown_schema_migrations (version, name) VALUES ($1, $2)",
                                           [migration.version, migration.name])
                }
                applied.append(migration.version)
            }
            let current = try connection.query("SELECT coalesce(max(version), 0) AS v FROM countdown_schema_migrations")
                .first?.decode("v", as: Int.self) ?? 0
            return Report(applied: applied, currentVersion: current)
        }
    }
}
