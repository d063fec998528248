import CountdownCommands
import CountdownDomain
import DelayQueue
import Foundation
import Postgres

/// Ending a stream from an operator's tool (countdown-admin, countdown-console).
public enum StreamEnding {
    /// Ends a stream as `StreamCommands.end` does, then removes its pre-start jobs and queues its end job at once.
    public static func end(_ streamID: String, as status: StreamStatus, database: PostgresClient, queue: any DelayQueue) async throws
        -> StreamCommands.Report {
        // Counted before the change: the relay may remove them as soon as the change commits.
        let pending = try await queue.jobs(ids: StreamCommands.preStartJobIDs(streamID)).count
        var report = try await StreamCommands(database: database).end(streamID, as: status)
        if report.changed {
            let now = Date()
            try await QueueOperation.apply(StreamCommands.followUp(after: report, now: now), to: queue, now: now)
            report.jobsRemoved = pending
        }
        return report
    }
}
