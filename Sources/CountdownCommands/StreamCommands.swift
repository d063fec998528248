import CountdownDomain
import CountdownStore
import Foundation
import Postgres

/// Status changes and reschedules as an operator (or the API) makes them. The database row is the truth: the
/// trigger records the change for the relay, so every worker follows. `followUp(after:)` names the queue
/// operations a caller holding a queue may apply at once (the relay's later identical operations are no-ops).
public struct StreamCommands: Sendable {
    public struct Report: Sendable, Codable, Equatable {
        public var streamID: String
        public var previousStatus: String
        public var status: String
        public var changed: Bool
        public var remindersCancelled: Int
        public var sessionsToEnd: Int
        public var jobsRemoved: Int
        public var plannedStartAt: Date?
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public enum Code: String, Sendable { case notFound, alreadyEnded, notScheduled, inThePast }
        public let code: Code
        public let streamID: String
        public let detail: String
        public var description: String { detail }
    }

    public let database: PostgresClient

    public init(database: PostgresClient) {
        self.database = database
    }

    /// The jobs a stream has only while it is scheduled.
    public static func preStartJobIDs(_ streamID: String) -> [String] {
        [CountdownJob.Kind.start, .reminder, .expire, .update].map { CountdownJob.streamJobID($0, stream: streamID) }
    }

    /// What the queue should do at once after `report`: an ended stream loses its pre-start jobs and, with
    /// sessions left, gets its end job now.
    public static func followUp(after report: Report, now: Date) -> [QueueOperation] {
        guard report.changed, StreamStatus(rawValue: report.status)?.isTerminal == true else { return [] }
        var operations = preStartJobIDs(report.streamID).map { QueueOperation.cancel(jobID: $0) }
        if report.sessionsToEnd > 0 { operations.append(.enqueue(.end(stream: report.streamID), dueAt: now)) }
        return operations
    }

    /// Ends a scheduled stream as `ready`, `started`, `cancelled` or `expired` (the integration guide's cancel: active
    /// reminders cancelled, pre-start jobs removed, end pushes for every runtime session). A stream that already ended
    /// is left as it is (`changed == false`).
    public func end(_ streamID: String, as status: StreamStatus) async throws -> Report {
        precondition(status.isTerminal, "only terminal statuses end a stream")
        return try await database.transaction { connection in
            guard let row = try StreamQueries.lockForCommand(streamID, on: connection) else {
                throw Failure(code: .notFound, streamID: streamID, detail: "stream \(streamID) does not exist")
            }
            guard row.status == StreamStatus.scheduled.rawValue else {
                return Report(streamID: streamID, previousStatus: row.status, status: row.status, changed: false, remindersCancelled: 0,
                              sessionsToEnd: row.sessions, jobsRemoved: 0)
            }
            try StreamQueries.setStatus(streamID, to: status.rawValue, on: connection)
            return Report(streamID: streamID, previousStatus: row.status, status: status.rawValue, changed: true,
                          remindersCancelled: status == .cancelled ? row.activeReminders : 0, sessionsToEnd: row.sessions, jobsRemoved: 0)
        }
    }

    /// Moves a scheduled stream's planned start; the relay moves its jobs and, if activities already started,
    /// queues update pushes. The new time must be in the future by PostgreSQL's clock.
    public func reschedule(_ streamID: String, to plannedStartAt: Date) async throws -> Report {
        try await database.transaction { connection in
            guard let row = try StreamQueries.lockForCommand(streamID, on: connection) else {
                throw Failure(code: .notFound, streamID: streamID, detail: "stream \(streamID) does not exist")
            }
            guard row.status == StreamStatus.scheduled.rawValue else {
                throw Failure(code: .notScheduled, streamID: streamID,
                              detail: "stream \(streamID) is \(row.status); only scheduled streams can be rescheduled")
            }
            guard plannedStartAt > row.now else {
                throw Failure(code: .inThePast, streamID: streamID,
                              detail: "\(plannedStartAt.formatted(.iso8601)) is not in the future (database time is \(row.now.formatted(.iso8601)))")
            }
            try StreamQueries.setPlannedStart(streamID, to: plannedStartAt, on: connection)
            return Report(streamID: streamID, previousStatus: row.status, status: row.status, changed: true, remindersCancelled: 0,
                          sessionsToEnd: 0, jobsRemoved: 0, plannedStartAt: plannedStartAt)
        }
    }
}
