import Postgres

extension CountdownConfig {
    /// `DATABASE_URL` with the worker's session settings: a statement past `DATABASE_STATEMENT_TIMEOUT_MS` or a
    /// lock wait past `DATABASE_LOCK_TIMEOUT_MS` fails (57014, 55P03: transient, the job is retried) instead of
    /// waiting without limit on another writer. JIT compilation is off: the fleet runs short statements, and a plan
    /// whose estimate is inflated by missing statistics (a table written since its last ANALYZE) spent about a second
    /// compiling a statement that runs in a millisecond.
    public func postgresConfiguration() throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: databaseURL)
        configuration.setTimeouts(statementMilliseconds: statementTimeoutMilliseconds, lockMilliseconds: lockTimeoutMilliseconds)
        configuration.sessionSettings["jit"] = "off"
        return configuration
    }
}
