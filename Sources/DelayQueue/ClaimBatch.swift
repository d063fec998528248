import Foundation

/// A claimed job, leased to the caller.
public struct ClaimedJob: Sendable, Hashable {
    public let id: String
    public let kind: String
    public let payload: [UInt8]
    /// When it was due (its lateness is `claimedAt - dueAt`).
    public let dueAt: Date
    public let lease: JobLease
    public var attempt: Int { lease.attempt }

    /// The queues of this package (and TestSupport's in-memory one) make claimed jobs.
    package init(id: String, kind: String, payload: [UInt8], dueAt: Date, lease: JobLease) {
        (self.id, self.kind, self.payload, self.dueAt, self.lease) = (id, kind, payload, dueAt, lease)
    }
}

/// One item of a claim.
public enum ClaimedItem: Sendable, Hashable {
    case job(ClaimedJob)
    /// The job's stored data was missing or unreadable; it has been dead-lettered with `reason`.
    case corrupt(id: String, reason: String)
}

/// What `claim` returned, and when to look again.
public struct ClaimBatch: Sendable {
    public let items: [ClaimedItem]
    /// The queue's clock at the claim.
    public let claimedAt: Date
    /// Time until the next waiting job is due or the next lease expires (`nil`: nothing waiting or leased).
    public let nextWakeIn: Duration?

    public init(items: [ClaimedItem], claimedAt: Date, nextWakeIn: Duration?) {
        self.items = items
        self.claimedAt = claimedAt
        self.nextWakeIn = nextWakeIn
    }

    public var jobs: [ClaimedJob] {
        items.compactMap { if case .job(let job) = $0 { job } else { nil } }
    }

    /// How long an idle worker should wait before claiming again: until the next due job, at most `maxIdle`.
    public func idleWait(maxIdle: Duration) -> Duration {
        guard let nextWakeIn else { return maxIdle }
        return min(max(nextWakeIn, .zero), maxIdle)
    }
}

/// What `fail` did.
public enum FailOutcome: Sendable, Hashable {
    /// Scheduled to run again after this backoff.
    case retrying(after: Duration)
    /// Attempts used up: now a dead letter.
    case deadLettered
    /// The lease was no longer current (expired and reclaimed, cancelled, re-enqueued): nothing changed.
    case stale
}
