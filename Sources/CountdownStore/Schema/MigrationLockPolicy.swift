import BlockingIO

/// How a migration waits for the locks it needs and for the server.
///
/// A statement such as `ALTER TABLE` queues for its lock behind any open transaction on the table, and every
/// worker statement on that table then queues behind it: one migration waiting on a long transaction, a manual
/// `VACUUM` or an index build stalls the fleet. So each statement of a migration waits at most `lockTimeout`
/// (below the workers' `DATABASE_LOCK_TIMEOUT_MS`, so the statements queued behind it do not fail); then the
/// migration's transaction rolls back, the traffic behind it proceeds, and the migration tries again after a pause
/// until `patience` is spent. The migration lock another migrator holds is waited for the same way (never queued
/// for), and a connection that cannot be opened or breaks is tried again until `connectPatience` is spent.
public struct MigrationLockPolicy: Sendable, Equatable {
    /// `lock_timeout` of each migration statement.
    public var lockTimeout: Duration
    /// How long one migration keeps trying before the run fails.
    public var patience: Duration
    /// How long a run keeps trying to reach the server (refused, unreachable, a failover) before it fails.
    public var connectPatience: Duration

    public static let defaultLockTimeout: Duration = .seconds(2)
    public static let defaultPatience: Duration = .seconds(600)
    public static let defaultConnectPatience: Duration = .seconds(120)
    /// The longest pause between two attempts.
    public static let maxPause: Duration = .seconds(10)

    public init(lockTimeout: Duration = defaultLockTimeout, patience: Duration = defaultPatience,
                connectPatience: Duration = defaultConnectPatience) {
        self.lockTimeout = lockTimeout
        self.patience = patience
        self.connectPatience = connectPatience
    }

    /// The pause after failed attempt `attempt` (from 1): half a second, doubling, at most `maxPause`, and never past
    /// what is left of the patience. Nil when no time is left for another attempt.
    public func pause(afterAttempt attempt: Int, elapsed: Duration) -> Duration? {
        Self.pause(afterAttempt: attempt, elapsed: elapsed, patience: patience)
    }

    /// The pause after connection attempt `attempt` failed, the same way within `connectPatience`.
    public func reconnectPause(afterAttempt attempt: Int, elapsed: Duration) -> Duration? {
        Self.pause(afterAttempt: attempt, elapsed: elapsed, patience: connectPatience)
    }

    private static func pause(afterAttempt attempt: Int, elapsed: Duration, patience: Duration) -> Duration? {
        let left = patience - elapsed
        guard left > .zero else { return nil }
        return min(Backoff(first: .milliseconds(500), limit: maxPause).delay(afterFailure: max(attempt, 1)), left)
    }

    /// `lock_timeout` as PostgreSQL reads it: whole milliseconds, at least 1 (0 would mean no limit).
    var lockTimeoutSetting: String {
        "\(max(1, lockTimeout.wholeMilliseconds))ms"
    }
}
