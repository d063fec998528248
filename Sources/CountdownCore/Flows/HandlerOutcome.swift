import Foundation

/// What a handler decided; the dispatcher turns it into a queue action (ack, retry, reschedule).
public enum HandlerOutcome: Sendable, Equatable {
    /// Work finished; `detail` is a short summary for the log.
    case done(detail: String)
    /// Nothing to do, on purpose (stream no longer scheduled, too late, …); counted by `reason`.
    case skipped(reason: String)
    /// Try again later: after `after` if the push service asked for it, else with backoff.
    case retry(after: Duration?, reason: String)
    /// Not due yet by PostgreSQL's clock (the stream moved): run again at `at`.
    case reschedule(at: Date, reason: String)
}
