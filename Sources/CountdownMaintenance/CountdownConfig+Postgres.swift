import Postgres

extension CountdownConfig {
    /// `DATABASE_URL` with the worker's session settings: a statement past `DATABASE_STATEMENT_TIMEOUT_MS` or a
    /// lock wait past `DATABASE_LOCK_TIMEOUT_MS` fails (57014, 55P03: transient, the job is retried) instead of
    /// waiting without limit on another writer.
    public func postgresConfiguration() throws -> PostgresConfiguration {
        var configuration = try PostgresConfiguration(url: databaseURL)
        configuration.setTimeouts(statementMilliseconds: statementTimeoutMilliseconds, lockMilliseconds: lockTimeoutMilliseconds)
        return configuration
    }
}
