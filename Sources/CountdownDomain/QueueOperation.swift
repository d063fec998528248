import Foundation

/// What the relay, the reconciler or a handler asks of the queue.
public enum QueueOperation: Hashable, Sendable {
    case enqueue(CountdownJob, dueAt: Date)
    case cancel(jobID: String)

    public var jobID: String {
        switch self {
        case .enqueue(let job, _): job.id
        case .cancel(let id): id
        }
    }
}
