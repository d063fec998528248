import Foundation
import Postgres

extension Migrator {
    /// Which versions a database has and which of this build's it still lacks; changes nothing.
    public struct Status: Sendable, Equatable, Codable {
        public struct Applied: Sendable, Equatable, Codable {
            public var version: Int
            public var name: String
            public var appliedAt: Date
        }

        public struct Pending: Sendable, Equatable, Codable {
            public var version: Int
            public var name: String
        }

        /// Recorded in `countdown_schema_migrations`, oldest first (also versions newer than this build).
        public var applied: [Applied]
        /// This build's migrations the database lacks, in the order `migrate` would apply them.
        public var pending: [Pending]
        /// The highest applied version (0 on an empty database).
        public var version: Int
        /// The highest version this build knows.
        public var required: Int
    }

    /// The highest applied version (0 when none); throws while the migrations table does not exist yet.
    public static func appliedVersion(_ database: PostgresClient) async throws -> Int {
        try await database.query("SELECT coalesce(max(version), 0) AS v FROM countdown_schema_migrations").first?.decode("v", as: Int.self) ?? 0
    }

    /// Reads the migrations table without taking the migration lock (a read while `migrate` runs sees the
    /// versions committed so far).
    public func status(_ database: PostgresClient) async throws -> Status {
        let exists = try await database.query("SELECT to_regclass('countdown_schema_migrations') IS NOT NULL AS present")
            .first?.decode("present", as: Bool.self) ?? false
        var applied: [Status.Applied] = []
        if exists {
            for row in try await database.query("SELECT version, name, applied_at FROM countdown_schema_migrations ORDER BY version") {
                applied.append(Status.Applied(version: try row.decode("version"), name: try row.decode("name"), appliedAt: try row.decode("applied_at")))
            }
        }
        let done = Set(applied.map(\.version))
        let pending = migrations.sorted { $0.version < $1.version }.filter { !done.contains($0.version) }
            .map { Status.Pending(version: $0.version, name: $0.name) }
        return Status(applied: applied, pending: pending, version: applied.map(\.version).max() ?? 0,
                      required: migrations.map(\.version).max() ?? 0)
    }
}
