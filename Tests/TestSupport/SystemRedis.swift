/// Which Redis a `CountdownSystem` uses.
public enum SystemRedis: Sendable {
    /// The test run's shared server (`TestEnvironment.redisURL`), isolated by the system's namespace.
    case shared
    /// A `ThrowawayRedis` of the system's own (`CountdownSystem.ownRedis`), to restart or kill.
    case own
    /// Any server set the caller started (a sentinel set); the system stops it when it stops.
    case target(any RedisTarget)
}
