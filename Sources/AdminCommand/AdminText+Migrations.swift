import CountdownStore

extension AdminText {
    /// `migrate --status`: applied versions with their time, pending ones, and one summary line.
    static func migrationStatus(_ status: Migrator.Status) -> String {
        let summary: String
        if !status.pending.isEmpty {
            summary = "schema is at version \(status.version); \(status.pending.count) pending (this build needs \(status.required)): run countdown-admin migrate"
        } else if status.version > status.required {
            summary = "schema is at version \(status.version), newer than this build's \(status.required); nothing pending"
        } else {
            summary = "schema is at version \(status.version); nothing pending"
        }
        return [
            "applied:",
            AdminOutput.table(["VERSION", "NAME", "APPLIED AT"], status.applied.map { [String($0.version), $0.name, AdminOutput.time($0.appliedAt)] }),
            "pending:",
            AdminOutput.table(["VERSION", "NAME"], status.pending.map { [String($0.version), $0.name] }),
            summary,
        ].joined(separator: "\n")
    }

    /// One line on stderr for an attempt that gave up on a lock, e.g. `migration 12 (ledger room to settle): a lock
    /// was not free within 2.0 seconds (attempt 1): canceling statement due to lock timeout; trying again in 0.5
    /// seconds`.
    /// When another migrator holds the migration lock: `migration 12 (ledger room to settle): waiting for the
    /// migration lock (attempt 1): another countdown-admin migrate holds the migration lock (held by pid 4242, …);
    /// trying again in 0.5 seconds`.
    static func migrationLockWait(_ wait: Migrator.LockWait, policy: MigrationLockPolicy) -> String {
        let waited = wait.heldByAnotherMigrator ? "waiting for the migration lock"
            : "a lock was not free within \(policy.lockTimeout)"
        return "migration \(wait.migration.version) (\(wait.migration.name)): \(waited) "
            + "(attempt \(wait.attempt)): \(wait.error.message ?? "lock timeout"); trying again in \(wait.pause)\n"
    }

    /// One line on stderr for a connection attempt that failed, e.g. `cannot reach PostgreSQL (attempt 2):
    /// connect to db:5432/countdown: connection refused; trying again in 1.0 seconds (for up to 120.0 seconds)`.
    static func migrationConnectionWait(_ wait: Migrator.ConnectionWait, policy: MigrationLockPolicy) -> String {
        "cannot reach PostgreSQL (attempt \(wait.attempt)): \(wait.error); trying again in \(wait.pause) "
            + "(for up to \(policy.connectPatience))\n"
    }
}
