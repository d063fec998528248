import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import Telemetry

/// Everything about one stream an operator needs, for `countdown-admin show`.
public struct StreamReport: Sendable, Codable {
    public typealias Participant = StreamReportQueries.Participant
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
    public typealias LedgerEntry = StreamReportQueries.LedgerEntry
    public typealias AndroidCountdown = StreamReportQueries.AndroidCountdown
    /// A runtime session; `token` redacted.
    public typealias Session = StreamReportQueries.Session
    public typealias Reminder = StreamReportQueries.Reminder
    /// A session's end push that has not gone out; `token` redacted.
    public typealias EndDelivery = StreamReportQueries.EndDelivery

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
    public static func load(_ streamID: String, database: StoreClient, queue: any DelayQueue, settings: FlowSettings,
                            transport: PushTransportKind) async throws -> StreamReport? {
        guard let rows = try await database.withConnection({ try StreamReportQueries.rows(streamID, on: $0) }) else { return nil }
        let devices = rows.devices.map { candidate in
            let skip = StartEligibility.skipReason(for: candidate, transport: transport, androidCountdown: settings.androidCountdownEnabled)
            return Device(userID: candidate.userID, deviceID: candidate.deviceID, platform: candidate.platform,
                          startEligibility: skip?.rawValue ?? "eligible")
        }
        var sessions = rows.sessions
        for index in sessions.indices { sessions[index].token = Redact.token(sessions[index].token) }
        var endDelivery = rows.endDelivery
        for index in endDelivery.indices { endDelivery[index].token = endDelivery[index].token.map(Redact.token) }
        let stream = rows.stream
        var report = StreamReport(
            id: stream.id, title: stream.title, status: stream.status, plannedStartAt: stream.plannedStartAt,
            startWindowOpensAt: stream.plannedStartAt.addingTimeInterval(-Double(settings.startLeadSeconds)), databaseNow: stream.databaseNow,
            participants: rows.participants, devices: devices, jobs: [], ledger: rows.ledger, sessions: sessions,
            reminders: rows.reminders, endDelivery: endDelivery)
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
