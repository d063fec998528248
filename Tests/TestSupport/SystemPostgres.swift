/// Which PostgreSQL a `CountdownSystem` uses.
public enum SystemPostgres: Sendable {
    /// The test run's shared server (`TestEnvironment.databaseURL`), isolated by the system's database.
    case shared
    /// A `ThrowawayPostgres` of the system's own (`CountdownSystem.ownPostgres`, `synchronous_commit=on`), to restart.
    case own
}
