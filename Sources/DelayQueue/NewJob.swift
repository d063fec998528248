import Foundation

/// When a job becomes due.
public enum JobDue: Sendable, Hashable {
    /// Due at once (by the queue's clock).
    case now
    /// Due this long after now (by the queue's clock, not the caller's).
    case after(Duration)
    /// Due at an absolute time.
    case at(Date)
}

/// A job to enqueue.
public struct NewJob: Sendable, Hashable {
    /// Deterministic id, e.g. `start:<streamId>`; one job per id.
    public var id: String
    /// What handler runs it, e.g. `start`.
    public var kind: String
    public var payload: [UInt8]
    public var due: JobDue

    public init(id: String, kind: String, payload: [UInt8] = [], due: JobDue) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.due = due
    }

    /// Longest id, kind and payload accepted.
    public static let maxIDBytes = 512
    public static let maxKindBytes = 64
    public static let maxPayloadBytes = 1 << 20

    /// Throws `.invalidJob` naming the problem.
    package func validate() throws(DelayQueueError) {
        func invalid(_ why: String) -> DelayQueueError { DelayQueueError(.invalidJob, why, id: id) }
        if id.isEmpty { throw invalid("empty id") }
        if id.utf8.count > Self.maxIDBytes { throw invalid("id longer than \(Self.maxIDBytes) bytes") }
        if kind.isEmpty { throw invalid("empty kind") }
        if kind.utf8.count > Self.maxKindBytes { throw invalid("kind longer than \(Self.maxKindBytes) bytes") }
        if kind.utf8.contains(0) { throw invalid("kind contains a NUL byte") }
        if payload.count > Self.maxPayloadBytes { throw invalid("payload larger than \(Self.maxPayloadBytes) bytes") }
    }
}
