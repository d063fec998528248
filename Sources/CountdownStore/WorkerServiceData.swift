/// The seam of the worker's periodic services to the database (`ClaimKeeper`, `PauseMirror`, `QueueStatsPoller`,
/// `ConnectionBudgetCheck`): each call is one statement or one transaction.
public protocol WorkerServiceData: Sendable {
    /// In one transaction: extends `held` and gives back the expired claims of `releasing` (`StartLedger.keepClaims`).
    func keepClaims(owner: String, held: [StartLedger.Key], releasing: [StartLedger.Key], seconds: Int) async throws
        -> (extended: Int, released: Int, waiting: [StartLedger.Key])

    /// The pause state of every kind PostgreSQL has a row for.
    func pauseStates() async throws -> [PauseQueries.Entry]

    /// The outbox's rows and the age of its oldest.
    func outboxBacklog() async throws -> (rows: Int, oldestSeconds: Double)

    /// How many entries the quarantine holds.
    func quarantined() async throws -> Int

    /// `max_connections` and the reserved slots.
    func connectionLimits() async throws -> (maxConnections: Int, reserved: Int)
}
