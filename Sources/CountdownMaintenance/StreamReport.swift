import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import Postgres
import Telemetry

/// Everything about one stream an operator needs, for `countdown-admin show`.
public struct StreamReport: Sendable, Codable {
    public typealias Participant = StreamReportStore.Participant
    public struct Device: Sendable, Codable {
        public var userID, deviceID, platform: String
        /// `eligible` or why not (for a start push now).
        public var startEligibility: String
    }
    public struct Job: Sendable, Codable {
        public var id, state: String
        public var at: Date?
        public var attempts: Int
        public var lastError: String
    }
    public typealias LedgerEntry = StreamReportStore.LedgerEntry
    public typealias AndroidCountdown = StreamReportStore.AndroidCountdown
    /// A runtime session; `token` redacted.
    public typealias Session = StreamReportStore.Session
    public typealias Reminder = StreamReportStore.Reminder
    /// A session's end push that has not gone out; `token` redacted.
    public typealias EndDelivery = StreamReportStore.EndDelivery

    public var id, title, status: String
    public var plannedStartAt: Date
    public var startWindowOpensAt: Date
    public var databaseNow: Date
    public var participants: [Participant]
    public var devices: [Device]
    public var jobs: [Job]
    public var ledger: [LedgerEntry]
    public var sessions: [Session]
    public var reminders: [Reminder]
    /// End pushes being retried, and those given up on when the dismissal window closed.
    public var endDelivery: [EndDelivery] = []

    /// `nil` when the stream does not exist.
    public static func load(_ streamID: String, database: PostgresClient, queue: any DelayQueue, settings: FlowSettings,
                            transport: PushTransportKind) async throws -> StreamReport? {
        let lead = settings.startLeadSeconds
        let partial: StreamReport? = try await database.withConnection { connection in
            guard let stream = try StreamReportStore.stream(streamID, on: connection) else { return nil }
            let devices = try StreamReportStore.devices(streamID, on: connection).map { candidate in
                let skip = StartEligibility.skipReason(for: candidate, transport: transport, androidCountdown: settings.androidCountdownEnabled)
                return Device(userID: candidate.userID, deviceID: candidate.deviceID, platform: candidate.platform,
                              startEligibility: skip?.rawValue ?? "eligible")
            }
            var sessions = try StreamReportStore.sessions(streamID, on: connection)
            for index in sessions.indices { sessions[index].token = Redact.token(sessions[index].token) }
            var endDelivery = try StreamReportStore.endDelivery(streamID, on: connection)
            for index in endDelivery.indices { endDelivery[index].token = endDelivery[index].token.map(Redact.token) }
            return StreamReport(
                id: stream.id, title: stream.title, status: stream.status, plannedStartAt: stream.plannedStartAt,
                startWindowOpensAt: stream.plannedStartAt.addingTimeInterval(-Double(lead)), databaseNow: stream.databaseNow,
                participants: try StreamReportStore.participants(streamID, on: connection), devices: devices, jobs: [],
                ledger: try StreamReportStore.ledger(streamID, on: connection), sessions: sessions,
                reminders: try StreamReportStore.reminders(streamID, on: connection), endDelivery: endDelivery)
        }
        guard var report = partial else { return nil }
        var ids = [CountdownJob.Kind.start, .reminder, .expire, .update, .end].map { CountdownJob.streamJobID($0, stream: streamID) }
        ids += report.sessions.map { CountdownJob.sessionEnd(stream: streamID, device: $0.deviceID).id }
        let infos = try await queue.jobs(ids: ids)
        report.jobs = ids.compactMap { id in
            guard let info = infos[id] else { return nil }
            switch info.state {
            case .waiting(let due): return Job(id: id, state: "waiting", at: due, attempts: info.attempts, lastError: info.lastError)
            case .leased(let until): return Job(id: id, state: "running", at: until, attempts: info.attempts, lastError: info.lastError)
            case .dead(let since): return Job(id: id, state: "dead", at: since, attempts: info.attempts, lastError: info.lastError)
            }
        }
        return report
    }
}
