import Foundation

/// What a handler decided; the dispatcher turns it into a queue action (ack, retry, reschedule).
public enum HandlerOutcome: Sendable, Equatable {
    /// Work finished; `detail` is a short summary for the log.
    case done(detail: String)
    /// Nothing to do, on purpose (stream no longer scheduled, too late, …); counted by `reason`.
    case skipped(reason: String)
    /// Try again later: after `after` if the push service asked for it, else with backoff.
    case retry(after: Duration?, reason: String)
    /// Try again after `after` on a schedule of the work's own that also bounds it (an end push retried until its
    /// dismissal window closes, `EndRetrySchedule`): the attempt is given back, so the queue's `JOB_MAX_ATTEMPTS`
    /// neither cuts the schedule short nor leaves the job's later failures without attempts.
    case retryOnSchedule(after: Duration, reason: String)
    /// Not due yet by PostgreSQL's clock (the stream moved, or clocks disagree): run again after `after`.
    case reschedule(after: Duration, reason: String)
    /// Finished by handing its work to `jobs` (due now, for any worker); `detail` is a short summary for the log.
    case fanOut(jobs: [CountdownJob], detail: String)

    /// A reschedule to `due`, measured on PostgreSQL's clock (`now`); at least a second, so clock skew between
    /// Redis and PostgreSQL cannot make a job spin.
    public static func reschedule(to due: Date, now: Date, reason: String) -> HandlerOutcome {
        .reschedule(after: .milliseconds(Int64(max(1, due.timeIntervalSince(now)) * 1000)), reason: reason)
    }
}
