import BlockingIO
import CountdownDomain
import Foundation
import Telemetry

/// What the dispatcher does with a claimed job once its handler returned or threw: a pure decision, so the single
/// and the batch paths settle alike and tests check it without a queue.
public enum JobAction: Sendable, Equatable {
    /// Done or skipped: acknowledged and gone.
    case ack
    /// Handed on: `jobs` are queued (due now), then this one is acknowledged.
    case enqueueThenAck(jobs: [CountdownJob])
    /// Back to waiting after `after` with its attempt given back (not due yet, or a dependency was away).
    case postpone(after: Duration, error: String?)
    /// Back to waiting after `after`, the attempt spent (the push service asked for a later retry).
    case retry(after: Duration, error: String)
    /// A failure: backoff by the queue's policy, or the dead letters once attempts are used up.
    case fail(error: String)
}

/// A decision with how it is counted and logged.
public struct JobDisposition: Sendable, Equatable {
    public var action: JobAction
    /// The `outcome` label of `countdown_jobs_total` (a `fail` is counted by what the queue did with it).
    public var outcome: String?
    public var level: LogLevel
    public var message: String
    public var fields: [String: String]

    /// Decides for one job. `transient` tells whether an error means a dependency was away (PostgreSQL or Redis
    /// down, a deadlock, a timeout) rather than a fault of the job.
    /// - Parameter cancelled: the run was cancelled by shutdown; an outcome that would try again hands the job back
    ///   at once instead, without spending an attempt (what it sent is recorded; the rest was never sent).
    public static func decide(_ result: Result<HandlerOutcome, any Error>, attempt: Int, cancelled: Bool = false,
                              transient: (any Error) -> Bool) -> JobDisposition {
        if cancelled {
            switch result {
            case .success(.done), .success(.fanOut), .success(.skipped), .success(.reschedule): break
            case .success(.retry), .success(.retryOnSchedule), .failure: return decide(.failure(CancellationError()), attempt: attempt, transient: transient)
            }
        }
        switch result {
        case .success(.done(let detail)):
            return JobDisposition(action: .ack, outcome: "done", level: .info, message: "job done", fields: ["outcome": "done", "detail": detail])
        case .success(.fanOut(let jobs, let detail)):
            return JobDisposition(action: .enqueueThenAck(jobs: jobs), outcome: "done", level: .info, message: "job handed on",
                                  fields: ["outcome": "fan_out", "detail": detail, "jobs": String(jobs.count)])
        case .success(.skipped(let reason)):
            return JobDisposition(action: .ack, outcome: "skipped", level: .info, message: "job skipped",
                                  fields: ["outcome": "skipped", "reason": reason])
        case .success(.reschedule(let after, let reason)):
            // Only while our lease is current: a newer plan the relay wrote meanwhile wins.
            return JobDisposition(action: .postpone(after: after, error: nil), outcome: "rescheduled", level: .info, message: "job rescheduled",
                                  fields: ["outcome": "rescheduled", "reason": reason])
        case .success(.retry(let after?, let reason)):
            return JobDisposition(action: .retry(after: after, error: reason), outcome: "retried", level: .warn, message: "job will be retried",
                                  fields: ["outcome": "retry", "reason": reason])
        case .success(.retryOnSchedule(let after, let reason)):
            // Bounded by the work's own schedule, not by the queue's attempts: the attempt is given back.
            return JobDisposition(action: .postpone(after: after, error: reason), outcome: "retried", level: .warn, message: "job will be retried",
                                  fields: ["outcome": "retry", "reason": reason])
        case .success(.retry(nil, let reason)):
            return JobDisposition(action: .fail(error: reason), outcome: nil, level: .warn, message: "job will be retried",
                                  fields: ["outcome": "retry", "reason": reason])
        case .failure(let error) where error is CancellationError:
            // The worker is stopping and cancelled the work: another worker takes it at once.
            return JobDisposition(action: .postpone(after: .zero, error: "worker shut down before the job finished"), outcome: "retried",
                                  level: .warn, message: "job cancelled by shutdown", fields: [:])
        case .failure(let error) where transient(error):
            // The database or Redis is away: hand the job back without spending its attempts.
            return JobDisposition(action: .postpone(after: transientBackoff(attempt: attempt), error: "\(error)"), outcome: "retried",
                                  level: .warn, message: "job hit a transient error", fields: ["error": "\(error)"])
        case .failure(let error):
            return JobDisposition(action: .fail(error: "\(error)"), outcome: nil, level: .error, message: "job failed", fields: ["error": "\(error)"])
        }
    }

    /// A hand-on withheld because jobs of `group` are still waiting or running (see `CountdownJob.exclusiveGroup`):
    /// the job is acknowledged and counted as skipped (`pages_in_flight`), and nothing is queued.
    public static func groupInFlight(_ group: String, withheld: Int) -> JobDisposition {
        JobDisposition(action: .ack, outcome: "skipped", level: .info, message: "job skipped: its pages are still queued or running",
                       fields: ["outcome": "skipped", "reason": "pages_in_flight", "group": group, "withheld": String(withheld)])
    }

    /// A job that cannot be decoded: backoff, then the dead letters with the reason (a kind only a newer worker
    /// knows survives a rolling deploy).
    public static func undecodable(_ reason: String) -> JobDisposition {
        JobDisposition(action: .fail(error: "undecodable: \(reason)"), outcome: nil, level: .error, message: "job cannot be decoded",
                       fields: ["reason": reason])
    }

    /// 2, 4, 8, … seconds by attempt, at most 30.
    static func transientBackoff(attempt: Int) -> Duration {
        Backoff(first: .seconds(2), limit: .seconds(30)).delay(afterFailure: max(attempt, 1))
    }
}
