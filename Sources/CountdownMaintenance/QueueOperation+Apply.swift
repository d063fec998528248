import CountdownDomain
import DelayQueue
import Foundation

extension QueueOperation {
    /// Applies operations to the queue: later operations on the same id win; enqueues are batched.
    public static func apply(_ operations: [QueueOperation], to queue: any DelayQueue, now: Date) async throws {
        var latest: [String: QueueOperation] = [:]
        var order: [String] = []
        for operation in operations {
            if latest.updateValue(operation, forKey: operation.jobID) == nil { order.append(operation.jobID) }
        }
        var enqueues: [NewJob] = []
        var cancels: [String] = []
        for id in order {
            switch latest[id]! {
            case .enqueue(let job, let dueAt):
                enqueues.append(NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: dueAt <= now ? .now : .at(dueAt)))
            case .cancel(let jobID):
                cancels.append(jobID)
            }
        }
        if !cancels.isEmpty { try await queue.cancel(cancels) }
        if !enqueues.isEmpty { try await queue.enqueue(enqueues) }
    }
}
