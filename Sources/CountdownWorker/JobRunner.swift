import CountdownDomain

/// Runs decoded jobs for the dispatcher: one, or a group its batch policy formed. The seam between the
/// dispatcher and the flows (a fake in tests).
public protocol JobRunner: Sendable {
    /// The outcome of each job, in order.
    func run(_ jobs: [CountdownJob]) async -> [Result<HandlerOutcome, any Error>]
}
