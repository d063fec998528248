import Foundation

/// Counts of a queue at one instant (by the queue's clock).
public struct QueueStats: Sendable, Hashable {
    /// Waiting, not yet due.
    public let delayed: Int
    /// Waiting and due (not yet claimed), those of paused kinds included.
    public let dueNow: Int
    /// Of `dueNow`, the jobs of paused kinds held aside until resumed.
    public let paused: Int
    /// Claimed, lease not yet ended.
    public let leased: Int
    /// Dead letters.
    public let dead: Int
    /// How long the oldest claimable due job has been waiting past its due time (zero when none is due; jobs of
    /// paused kinds do not count).
    public let oldestDueLateness: Duration

    public init(delayed: Int, dueNow: Int, leased: Int, dead: Int, oldestDueLateness: Duration, paused: Int = 0) {
        self.delayed = delayed
        self.dueNow = dueNow
        self.paused = paused
        self.leased = leased
        self.dead = dead
        self.oldestDueLateness = oldestDueLateness
    }
}

/// A job that used up its attempts or could not be read.
public struct DeadLetter: Sendable, Hashable {
    public let id: String
    /// `nil` when the job's data is missing.
    public let kind: String?
    public let payload: [UInt8]?
    public let attempts: Int
    public let lastError: String
    public let deadAt: Date

    package init(id: String, kind: String?, payload: [UInt8]?, attempts: Int, lastError: String, deadAt: Date) {
        (self.id, self.kind, self.payload, self.attempts, self.lastError, self.deadAt) = (id, kind, payload, attempts, lastError, deadAt)
    }
}

/// What the queue holds for one job.
public struct JobInfo: Sendable, Hashable {
    public enum State: Sendable, Hashable {
        case waiting(dueAt: Date)
        case leased(until: Date)
        case dead(since: Date)
    }

    public let id: String
    /// `nil` when the job's data is missing or unreadable.
    public let kind: String?
    public let payload: [UInt8]?
    public let state: State
    /// Attempts made so far.
    public let attempts: Int
    /// The error of the last failed attempt (or the dead letter's reason), empty when none.
    public let lastError: String

    package init(id: String, kind: String?, payload: [UInt8]?, state: State, attempts: Int, lastError: String) {
        (self.id, self.kind, self.payload, self.state, self.attempts, self.lastError) = (id, kind, payload, state, attempts, lastError)
    }
}
