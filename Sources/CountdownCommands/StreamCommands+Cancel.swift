import CountdownDomain
import Postgres

extension StreamCommands {
    /// What a cancel did, as the HTTP API reports it.
    public struct CancelReport: Sendable, Equatable {
        /// Reminders that were `active` and are now `cancelled`.
        public var remindersCancelled: Int
        /// Runtime sessions that will get an end push.
        public var sessionsToEnd: Int

        public init(remindersCancelled: Int, sessionsToEnd: Int) {
            self.remindersCancelled = remindersCancelled
            self.sessionsToEnd = sessionsToEnd
        }
    }

    public enum CancelOutcome: Sendable, Equatable {
        case cancelled(CancelReport)
        /// No stream has this id.
        case notFound
        /// The stream is already `ready`, `started`, `cancelled` or `expired`.
        case alreadyEnded(StreamStatus)
    }

    /// The same cancel as `countdown-admin cancel`, writing only the row (the workers remove the jobs and send
    /// the end pushes, following the trigger's outbox record).
    public static func cancel(_ streamID: String, database: PostgresClient) async throws -> CancelOutcome {
        do {
            let report = try await StreamCommands(database: database).end(streamID, as: .cancelled)
            guard report.changed else { return .alreadyEnded(StreamStatus(rawValue: report.status) ?? .cancelled) }
            return .cancelled(CancelReport(remindersCancelled: report.remindersCancelled, sessionsToEnd: report.sessionsToEnd))
        } catch let failure as Failure where failure.code == .notFound {
            return .notFound
        }
    }
}
